# Sourced by bench/euler_vs_athena.sh, bench/euler_profile.sh and bench/euler_cfl_sweep.sh: the
# Stratus deck of the blast they measure, and Athena++'s input file of the same blast. Athena++'s `blast` state (pressure 100 x 0.1 in a sphere of radius 0.1,
# 0.1 outside, density 1, gamma 5/3, periodic cube [-0.5, 0.5]^3) as Stratus's `sedov` problem:
# energy (10 - 0.1) x (4/3) pi 0.1^3 / (gamma - 1) deposited in the cells whose centres lie
# within 0.1 of the centre, ambient pressure 0.1 (the inner pressure matches to the staircase of
# the sphere's cells). PLM (van Leer) + HLLC, no field output, no checkpoint.
#
# blast_deck CELLS STEPS T_END INTEGRATOR CFL LOG_EVERY   (prints the deck)
blast_deck() {
  local energy
  energy=$(/usr/bin/python3 -c "import math; print(repr((10.0 - 0.1) * 4.0 / 3.0 * math.pi * 0.1**3 / (5.0 / 3.0 - 1.0)))")
  cat <<DECK
[run]
solver = "euler"
steps = $2
[euler]
cells = [$1, $1, $1]
box_lo = [-0.5, -0.5, -0.5]
box_hi = [0.5, 0.5, 0.5]
gamma = 1.666666666666667
t_end = $3
reconstruction = "plm"
limiter = "van_leer"
riemann = "hllc"
integrator = "$4"
cfl = $5
log_every = $6
write_fields = false
[euler.initial]
problem = "sedov"
energy = $energy
radius = 0.1
ambient_pressure = 0.1
[checkpoint]
interval = "off"
at_end = false
DECK
}

# athinput NLIM TLIM RANKS: Athena++'s input file (no outputs; the mesh split along x3 over the
# ranks). Reads cells, cfl_athena, integrator and xorder of the calling script.
athinput() {
  local mb3=$((cells / $3))
  cat <<ATH
<job>
problem_id = blast
<time>
cfl_number = $cfl_athena
nlim       = $1
tlim       = $2
integrator = $integrator
xorder     = $xorder
ncycle_out = 1000000
<mesh>
nx1 = $cells
x1min = -0.5
x1max = 0.5
ix1_bc = periodic
ox1_bc = periodic
nx2 = $cells
x2min = -0.5
x2max = 0.5
ix2_bc = periodic
ox2_bc = periodic
nx3 = $cells
x3min = -0.5
x3max = 0.5
ix3_bc = periodic
ox3_bc = periodic
<meshblock>
nx1 = $cells
nx2 = $cells
nx3 = $mb3
<hydro>
gamma = 1.666666666666667
<problem>
compute_error = false
pamb   = 0.1
prat   = 100.
radius = 0.1
ATH
}

# need_athena SCRIPT: exits 2, naming the calling script, unless $athena is an executable.
need_athena() {
  if [ -z "$athena" ] || [ ! -x "$athena" ]; then
    echo "$1: no Athena++ binary (ATHENA='$athena'). Athena++ is not packaged: build it" >&2
    echo "outside this repository (configure.py --prob blast --flux hllc -mpi; make) and set ATHENA." >&2
    exit 2
  fi
}
