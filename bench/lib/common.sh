# Shared by the bench scripts (sourced, not run).

# median: the median of the numbers on stdin (one per line or separated by spaces); the mean of
# the two middle ones for an even count.
median() {
  tr ' ' '\n' | grep . | sort -g |
    awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}
