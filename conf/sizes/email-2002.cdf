# Sizes of e-mail messages, whole (headers included), as a cumulative distribution:
# "BYTES SHARE" = the share of messages of at most BYTES (smtp.size_dist = cdf).
# Source: the size histogram of the mail a server handled, posted to freebsd-net
# (http://osdir.com/ml/freebsd.devel.net/2002-10/msg00203.html), as tabulated in
# J. Buchner, "Modelling realistic email traffic - email size distribution" (2009,
# http://johannes.jakeapp.com/blog/category/science/200908/modelling-realistic-email-traffic-email-size-distribution),
# who also puts a floor of 900 bytes under it for the headers. The shape is
# lognormal-like with a power-law tail, as Matsubara found on a campus server over
# 2009-2015 ("Fluctuations in email size", Eur. Phys. J. Plus 132 (2017); arXiv:1608.08503):
# median near 4 KiB, 10 % over 64 KiB, 1.5 % over 1 MiB.
2048 0.2353
4096 0.4917
8192 0.6760
16384 0.7958
32768 0.8536
65536 0.9047
131072 0.9330
262144 0.9574
524288 0.9724
1048576 0.9849
2097152 0.9996
4194304 1.0000
