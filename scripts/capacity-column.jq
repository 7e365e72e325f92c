# capacity-column.jq: one column's row of compare-backends --capacity's table: the mean
# capacity over its repeats with their min and max, whether the repeats' intervals
# agree, and what failed first above each capacity, the open band, the claims refuted
# and claimed again below, and a confirmation that refuted the last. Input: the
# column's searches' results (`jq -rs --arg l LABEL -f capacity-column.jq ...`);
# output: LABEL, then those four fields, tab-separated.
# "First to fail": a step search names its first failed gate (first_failed); a
# staircase, whose levels carry their own verdicts, its lowest failing level above the
# capacity outside the confirmation (which says its own), by what decided it and the
# rate it offered (the interval's upper end).
def r1: . * 10 | round / 10;
def first_fail:
  if .first_failed then .first_failed.name
  else .capacity_msg_s as $c
    | [.levels[]? | (.offered // .rate) as $o | select(.verdict == "fail" and .kind != "confirm" and $c != null and $o > $c) | .o = $o]
    | min_by(.o) | if . == null then empty else "\(.why | split(":")[0] | split(",")[0]) at \(.o | r1)" end
  end;
[.[] | .capacity_msg_s | select(. != null)] as $c
| ([.[] | first_fail]
   + [.[] | .open_band | select(. != null) | "open \(.[0] | r1)-\(.[1] | r1)"]
   + [.[] | .claims_refuted[]? | "claimed \(.claim_msg_s | r1) first (too high at \(.share_pct) %)"]
   + [.[] | select(.method.confirm == true and .confirmed == false)
      | "NOT confirmed" + (if .refuted then " (\(.refuted.claim) at \(.refuted.share_pct) %)" else "" end)]) as $g
| [.[] | .known_between | select(. != null)] as $k
| (if ($k | length) < 2 then "-"
   elif ([$k[][0]] | max) <= ([$k[][1]] | min) then "yes, all in \([$k[][0]] | max | r1)-\([$k[][1]] | min | r1)"
   else "no: intervals apart" end) as $agree
| if ($c | length) == 0 then "\($l)\tnone found"
  else "\($l)\t\($c | add / length | r1) (\($c | min | r1)-\($c | max | r1), \($c | length) of \(length))\t\($c | add / length * 60 | round)\t\($agree)\t\($g | unique | join(", "))" end
