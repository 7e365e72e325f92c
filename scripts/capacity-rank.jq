# capacity-rank.jq: which column of compare-backends --capacity has the most capacity, and by
# how much its intervals allow. Input: the searches' results (`jq -rs -f capacity-rank.jq
# LABEL-K.capacity.json...`, every column and repeat). A column's interval spans its searches'
# (from their lowest lower bound to their highest upper one), so repeats that disagree widen
# it rather than pick one. One column is ahead of another only where their intervals are
# apart; the margin is then from the nearer ends to the farther ones. A search whose
# confirmation was asked and did not come out (NOT confirmed) has an interval in doubt: it
# is left out, and said to be. Prints nothing for a single column.
def r1: . * 10 | round / 10;
def span: if .hi == null then "\(.lo | r1)+" else "\(.lo | r1)-\(.hi | r1)" end;
def ahead($a; $b): $b.hi != null and $a.lo > $b.hi;

def doubted: .method.confirm == true and .confirmed != true;

[.[] | select(doubted)] as $out
| ([.[].label] | unique | length) as $columns
| [group_by(.label)[]
 | map(select(doubted | not))
 | select(length > 0)
 | { name: .[0].label, n: length,
     k: [.[] | .known_between | select(. != null)],
     mean: ([.[] | .capacity_msg_s | select(. != null)] | if length > 0 then add / length else null end) }
 | select((.k | length) > 0 and .mean != null)
 | { name, n, mean, lo: ([.k[][0]] | min),
     hi: (if any(.k[]; .[1] == null) then null else [.k[][1]] | max end) }]
| sort_by(-.mean, -.lo)
| if (. | length) >= 2 then
    .[0] as $a | .[1] as $b
    | (if ahead($a; $b)
       then "most capacity: \($a.name), ahead of \($b.name) by "
            + (($a.lo / $b.hi - 1) * 100 | r1 | tostring)
            + (if $a.hi == null or $b.lo <= 0 then " % or more" else "-\(($a.hi / $b.lo - 1) * 100 | r1) %" end)
            + " (\($a | span) and \($b | span) msg/s)"
       else "most capacity: cannot tell \($a.name) from \($b.name), their intervals overlap"
            + " (\($a | span) and \($b | span) msg/s)" end),
      (. as $c | "ranked: " + ([range(0; length) as $i
                                 | (if $i == 0 then "" elif ahead($c[$i - 1]; $c[$i]) then " > " else " ~ " end)
                                   + $c[$i].name] | join(""))
                  + "   (\">\": intervals apart, \"~\": they overlap)")
  elif $columns >= 2 then "most capacity: cannot tell, fewer than two columns with an interval to rank"
  else empty end,
  (if ($out | length) > 0 and $columns >= 2
   then "left out: \($out | length) search(es) NOT confirmed, of \([$out[].label] | unique | join(", "))" else empty end),
  (if (. | length) >= 2 and any(.[]; .n < 2)
   then "(one search of a column: its interval holds the search's error, not a fresh server's spread; --repeat 3)"
   else empty end)
