# hist_percentiles.jq: the percentiles of the sum of the latency histograms of
# several result files, computed from the bucket text and the layout that the files
# describe ("histogram" at their top) alone: an implementation independent of
# mailsoak's, for checking `mailsoak merge`. Use: jq -s --arg cmd NAME -f THIS FILES...
def buckets: if . == "" then [] else split(" ") | map(split(":") as [$i, $cs]
          | ($i | tonumber) as $i0 | $cs | split(",") | map(tonumber) | to_entries
          | map([$i0 + .key, .value])) | add end;
# bucket i: below 128 the value i; above, 64 sub-buckets per power of two
def bucket_range($i): if $i < 128 then [$i, $i] else
          (($i - 128) / 64 | floor + 7) as $e | (($i - 128) % 64 + 64) as $m
          | pow(2; $e - 6) as $w | [$m * $w, $m * $w + $w - 1] end;
# the midpoint of the bucket holding the value of that rank, within min and max
def pct($b; $count; $min; $max; $p):
  if $p >= 100 then $max else
    (($p / 100 * $count + 0.999999999) | floor | if . < 1 then 1 else . end) as $rank
    | first(foreach $b[] as $x ([0, null]; [.[0] + $x[1], $x[0]]; select(.[0] >= $rank) | .[1])) as $i
    | bucket_range($i) as [$lo, $hi] | ($lo + (($hi - $lo) / 2 | floor))
    | if . < $min then $min elif . > $max then $max else . end end;
[.[].summary.latency[$cmd] | select(. != null)] as $l
| ($l | map(.hist.buckets | buckets) | add | sort_by(.[0]) | group_by(.[0])
  | map([.[0][0], (map(.[1]) | add)])) as $b
| ($l | map(.count) | add) as $count
| ($l | map(select(.count > 0) | .hist.min_ns) | min) as $min
| ($l | map(.hist.max_ns) | max) as $max
| {count: $count, p50: (pct($b; $count; $min; $max; 50) / 1e6), p90: (pct($b; $count; $min; $max; 90) / 1e6),
   p99: (pct($b; $count; $min; $max; 99) / 1e6), p999: (pct($b; $count; $min; $max; 99.9) / 1e6),
   max: ($max / 1e6)}
