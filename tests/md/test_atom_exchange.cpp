// AtomExchange: migration delivers every atom to its owner with its data and images, ghosts hold
// every neighbour within the cutoff (checked against a brute force over all periodic images of
// the gathered system), updates follow the owners and reverse_forces brings every ghost's force
// home; each crossing pair has exactly one upper ghost copy; a per-atom column added by one
// declaration migrates and reaches the ghosts it is flagged for, also after the arrays grew; with
// both MPI transports (staged copies through host buffers run on CPUs too). Errors:
// test_atom_exchange_errors.cpp.
#include "stratus/solvers/md/atom_exchange.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include "atom_exchange_util.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

namespace stratus::md::test {
namespace {

struct Layout {
  std::array<bool, 3> periodic;
  std::array<int, 3> hint;
};

// Decompositions that fit the cutoff at 1, 2 and 4 ranks, with periodic and wall axes.
std::vector<Layout> layouts() {
  const int n = nranks();
  std::vector<Layout> out;
  for (const auto& periodic :
       {std::array<bool, 3>{true, true, true}, {true, false, true}, {false, true, false}}) {
    out.push_back({periodic, {0, 0, 1}});
    out.push_back({periodic, {n, 1, 1}});
    out.push_back({periodic, {1, n, 1}});
  }
  return out;
}

std::string describe(const CartDecomposition& dec, const char* config) {
  return fmt::format("{} atoms, ranks {}x{}x{}, periodic {}{}{}", config, dec.dims()[0],
                     dec.dims()[1], dec.dims()[2], int(dec.periodic()[0]), int(dec.periodic()[1]),
                     int(dec.periodic()[2]));
}

// Checks the owned atoms after a migration: each inside the local box, unwrapped position
// (x + image L) as expected (`unwrapped[id]`), velocity and type its own; every id once.
void check_owned(const CartDecomposition& dec, const AtomData& atoms,
                 const std::vector<Vec>& unwrapped) {
  EXPECT_EQ(atoms.nghost, 0);
  const Box local = dec.local_box(kBox);
  const auto mine = download(atoms, 0, atoms.nlocal);
  int bad = 0;
  for (const HostAtom& a : mine) {
    const auto i = static_cast<std::size_t>(a.id);
    ASSERT_LT(i, unwrapped.size());
    bool fine = a.type == type_of(a.id) && a.v == velocity_of(a.id);
    for (int d = 0; d < 3; ++d) {
      fine = fine && a.x[d] >= local.lo[d] && a.x[d] < local.hi[d] &&
             std::abs(a.x[d] + a.image[d] * kBox.length(d) - unwrapped[i][d]) < 1e-9;
    }
    if (!fine && ++bad < 5) {
      ADD_FAILURE() << "atom " << a.id << " at (" << a.x[0] << ", " << a.x[1] << ", " << a.x[2]
                    << ") image (" << a.image[0] << ", " << a.image[1] << ", " << a.image[2]
                    << "), expected unwrapped (" << unwrapped[i][0] << ", " << unwrapped[i][1]
                    << ", " << unwrapped[i][2] << "), v and type of its id, inside [" << local.lo[0]
                    << ", " << local.hi[0] << ") x [" << local.lo[1] << ", " << local.hi[1]
                    << ") x [" << local.lo[2] << ", " << local.hi[2] << ")";
    }
  }
  EXPECT_EQ(bad, 0);
  std::vector<GlobalId> ids;
  for (const HostAtom& a : allgather(mine)) ids.push_back(a.id);
  std::sort(ids.begin(), ids.end());
  ASSERT_EQ(ids.size(), unwrapped.size());
  for (std::size_t i = 0; i < ids.size(); ++i) ASSERT_EQ(ids[i], static_cast<GlobalId>(i));
}

// For each setup and configuration: atoms scattered near their owners (stored outside the box
// on periodic axes, with images), migrated; `check` gets the expected unwrapped positions.
template <class F>
void for_each_migrated(F&& check) {
  for (const MpiTransport transport : {MpiTransport::direct, MpiTransport::staged}) {
    unsigned seed = 1;
    for (const Layout& s : layouts()) {
      const CartDecomposition dec(comm(), s.periodic, s.hint);
      for (const char* config : {"random", "lattice"}) {
        const auto pos = std::string(config) == "random" ? random_positions(kBox, 1000, seed)
                                                         : lattice_positions(kBox);
        std::vector<std::array<int, 3>> images;
        AtomData atoms;
        upload(atoms, scatter_near_owners(dec, kBox, pos, images, seed + 1000));
        seed += 1;
        std::vector<Vec> unwrapped = pos;
        for (std::size_t i = 0; i < pos.size(); ++i) {
          for (int d = 0; d < 3; ++d) unwrapped[i][d] += images[i][d] * kBox.length(d);
        }
        AtomExchange exchange(dec, kBox, kCutoff, transport);
        exchange.migrate(atoms);
        SCOPED_TRACE(describe(dec, config) + (transport == MpiTransport::staged ? ", staged" : ""));
        check(dec, exchange, atoms, unwrapped);
      }
    }
  }
}

TEST(AtomExchange, MigrateDeliversEveryAtomToItsOwner) {
  for_each_migrated([](const CartDecomposition& dec, AtomExchange&, AtomData& atoms,
                       const std::vector<Vec>& unwrapped) { check_owned(dec, atoms, unwrapped); });
}

// The values of two added columns, from the atom's id: a charge (migrates and goes to ghosts) and
// a molecule id of two values (migrates only).
Real charge_of(GlobalId id) { return 0.25 * static_cast<Real>(id) - 3; }
GlobalId molecule_of(GlobalId id, int c) { return c == 0 ? id / 4 : 1000000 + 7 * id; }

// Sets both added columns of the owned atoms from their ids.
void set_added_columns(AtomData& atoms) {
  const auto id = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), atoms.id);
  auto charge = Kokkos::create_mirror_view(atoms.column<Real>("charge"));
  auto molecule = Kokkos::create_mirror_view(atoms.column<GlobalId, 2>("molecule"));
  for (int i = 0; i < atoms.nlocal; ++i) {
    charge(i, 0) = charge_of(id(i));
    for (int c = 0; c < 2; ++c) molecule(i, c) = molecule_of(id(i), c);
  }
  Kokkos::deep_copy(atoms.column<Real>("charge"), charge);
  Kokkos::deep_copy(atoms.column<GlobalId, 2>("molecule"), molecule);
}

// Rows of [begin, end) whose charge (and molecule, with `molecule`) is not that of their id.
int wrong_added_columns(const AtomData& atoms, int begin, int end, bool molecule) {
  const auto id = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), atoms.id);
  const auto q =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), atoms.column<Real>("charge"));
  const auto m = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                     atoms.column<GlobalId, 2>("molecule"));
  int wrong = 0;
  for (int i = begin; i < end; ++i) {
    bool fine = q(i, 0) == charge_of(id(i));
    for (int c = 0; c < 2 && molecule; ++c) fine = fine && m(i, c) == molecule_of(id(i), c);
    wrong += fine ? 0 : 1;
  }
  return wrong;
}

TEST(AtomExchange, AddedColumnsTravelWithTheirAtoms) {
  for (const MpiTransport transport : {MpiTransport::direct, MpiTransport::staged}) {
    unsigned seed = 500;
    for (const Layout& s : layouts()) {
      const CartDecomposition dec(comm(), s.periodic, s.hint);
      SCOPED_TRACE(describe(dec, "random") + (transport == MpiTransport::staged ? ", staged" : ""));
      const auto pos = random_positions(kBox, 500, seed);
      std::vector<std::array<int, 3>> images;
      AtomData atoms;
      // One declaration each: nothing else in the exchange knows about them.
      atoms.add_column<Real>("charge", {.migrate = true, .ghost = true, .checkpoint = true});
      atoms.add_column<GlobalId, 2>("molecule", {.migrate = true, .checkpoint = true});
      upload(atoms, scatter_near_owners(dec, kBox, pos, images, seed + 1000));
      seed += 1;
      set_added_columns(atoms);
      std::vector<Vec> unwrapped = pos;
      for (std::size_t i = 0; i < pos.size(); ++i) {
        for (int d = 0; d < 3; ++d) unwrapped[i][d] += images[i][d] * kBox.length(d);
      }
      AtomExchange exchange(dec, kBox, kCutoff, transport);
      for (int pass = 0; pass < 2; ++pass) {
        SCOPED_TRACE(fmt::format("pass {}", pass));
        exchange.migrate(atoms);
        check_owned(dec, atoms, unwrapped);
        exchange.build_ghosts(atoms);
        EXPECT_EQ(wrong_added_columns(atoms, 0, atoms.nlocal, true), 0);
        EXPECT_EQ(wrong_added_columns(atoms, atoms.nlocal, atoms.nall(), false), 0);

        // Growing the arrays grows every column, the added ones too, keeping their rows; the
        // members are the registered columns themselves.
        const int capacity = atoms.capacity();
        atoms.reserve(2 * capacity + 100);
        ASSERT_GT(atoms.capacity(), capacity);
        EXPECT_EQ(atoms.column<Real>("charge").extent(0),
                  static_cast<std::size_t>(atoms.capacity()));
        EXPECT_EQ((atoms.column<GlobalId, 2>("molecule").extent(0)), atoms.x.extent(0));
        EXPECT_EQ((atoms.column<Real, 3>("position").data()), atoms.x.data());
        EXPECT_EQ(atoms.columns.at("type").rows(), atoms.capacity());
        EXPECT_EQ(wrong_added_columns(atoms, 0, atoms.nlocal, true), 0);
        EXPECT_EQ(wrong_added_columns(atoms, atoms.nlocal, atoms.nall(), false), 0);

        // Atoms drift along periodic axes (by less than a block) and migrate on the next pass.
        auto owned = download(atoms, 0, atoms.nlocal);
        auto drift = [&](GlobalId id, int d) {
          return s.periodic[d] ? 0.9 * std::sin(0.3 * static_cast<Real>(id) + d) : 0.0;
        };
        for (HostAtom& a : owned) {
          for (int d = 0; d < 3; ++d) a.x[d] += drift(a.id, d);
        }
        for (std::size_t i = 0; i < unwrapped.size(); ++i) {
          for (int d = 0; d < 3; ++d) unwrapped[i][d] += drift(static_cast<GlobalId>(i), d);
        }
        set_owned_positions(atoms, owned);
      }
    }
  }
}

TEST(AtomExchange, MigrateDealsOutRoundRobinAtoms) {
  // Rank r starts with the ids i % size == r: most on the wrong rank, all within one block
  // when no axis has more than two ranks.
  for (const Layout& s : layouts()) {
    const CartDecomposition dec(comm(), s.periodic, s.hint);
    if (*std::max_element(dec.dims().begin(), dec.dims().end()) > 2) continue;
    const auto pos = random_positions(kBox, 2000, 5);
    std::vector<HostAtom> mine;
    for (std::size_t i = my_rank(); i < pos.size(); i += nranks()) {
      const auto id = static_cast<GlobalId>(i);
      mine.push_back({pos[i], velocity_of(id), {0, 0, 0}, id, type_of(id)});
    }
    AtomData atoms;
    upload(atoms, mine);
    AtomExchange exchange(dec, kBox, kCutoff, MpiTransport::staged);
    exchange.migrate(atoms);
    SCOPED_TRACE(describe(dec, "round-robin"));
    check_owned(dec, atoms, pos);
  }
}

TEST(AtomExchange, AtomsOnTheBoxEdgeWrapIntoIt) {
  // One rank along x, so both atoms stay on this rank. Exactly at hi: to lo, one more image.
  // One ulp below lo: lo - 4e-16 + L rounds to hi, so again lo, with the image unchanged.
  const CartDecomposition dec(comm(), {true, true, true}, {1, 0, 0});
  const Box local = dec.local_box(kBox);
  const GlobalId first = 2 * my_rank();
  const Real below = std::nextafter(kBox.lo[0], -1e9);
  AtomData atoms;
  upload(atoms, {HostAtom{{kBox.hi[0], local.lo[1], local.lo[2]}, {}, {2, 0, 0}, first, 1},
                 HostAtom{{below, local.lo[1], local.lo[2]}, {}, {0, 0, 0}, first + 1, 1}});
  AtomExchange exchange(dec, kBox, kCutoff, MpiTransport::direct);
  exchange.migrate(atoms);
  auto mine = download(atoms, 0, atoms.nlocal);
  ASSERT_EQ(mine.size(), 2u);
  std::sort(mine.begin(), mine.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  EXPECT_EQ(mine[0].x[0], kBox.lo[0]);
  EXPECT_EQ(mine[0].image[0], 3);
  EXPECT_EQ(mine[1].x[0], kBox.lo[0]);
  EXPECT_EQ(mine[1].image[0], 0);
}

// (id, squared distance) of the atoms within the cutoff of `x`, sorted.
using Neighbours = std::vector<std::pair<GlobalId, Real>>;
void add_if_near(Neighbours& out, const Vec& x, const Vec& y, GlobalId id) {
  Real r2 = 0;
  for (int d = 0; d < 3; ++d) r2 += (x[d] - y[d]) * (x[d] - y[d]);
  if (r2 < kCutoff * kCutoff && r2 > 0) out.emplace_back(id, r2);
}

void expect_same(Neighbours got, Neighbours want, GlobalId id, int& bad) {
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  bool same = got.size() == want.size();
  for (std::size_t k = 0; same && k < got.size(); ++k) {
    same = got[k].first == want[k].first && std::abs(got[k].second - want[k].second) < 1e-9;
  }
  if (!same && ++bad < 5) {
    ADD_FAILURE() << "atom " << id << ": " << got.size() << " neighbours within the cutoff from "
                  << "owned + ghosts, " << want.size() << " over all periodic images";
  }
}

// Checks the ghosts after build_ghosts against the owned atoms of every rank: each ghost an
// image of an atom (never twice) outside the local box and within the cutoff of it, the ghost
// count between what the halo must and may hold, and every owned atom's neighbours within the
// cutoff the same as a brute force over all periodic images.
void check_ghosts(const CartDecomposition& dec, const AtomExchange& exchange,
                  const AtomData& atoms) {
  EXPECT_EQ(exchange.ghost_count(), atoms.nghost);
  const auto all = download(atoms, 0, atoms.nall());
  const auto global = allgather(download(atoms, 0, atoms.nlocal));
  std::map<GlobalId, Vec> owner;
  for (const HostAtom& a : global) owner[a.id] = a.x;
  const Box local = dec.local_box(kBox);
  std::array<int, 3> reach{};  // images to try per axis
  for (int d = 0; d < 3; ++d) reach[d] = dec.periodic()[d] ? 1 : 0;

  // Each ghost: an image (id, n) of an atom, never twice, outside the local box but within
  // the cutoff of it; its id and type those of the owner.
  std::set<std::tuple<GlobalId, int, int, int>> seen;
  int bad = 0;
  for (int k = 0; k < atoms.nall(); ++k) {
    const HostAtom& g = all[k];
    std::array<int, 3> n{};
    bool in_local = true, in_halo = true, exact = true;
    for (int d = 0; d < 3; ++d) {
      n[d] = static_cast<int>(std::lround((g.x[d] - owner.at(g.id)[d]) / kBox.length(d)));
      exact = exact && std::abs(g.x[d] - owner.at(g.id)[d] - n[d] * kBox.length(d)) < 1e-9;
      in_local = in_local && g.x[d] >= local.lo[d] && g.x[d] < local.hi[d];
      in_halo = in_halo && g.x[d] >= local.lo[d] - kCutoff - 1e-9 &&
                g.x[d] < local.hi[d] + kCutoff + 1e-9;
    }
    const bool ghost = k >= atoms.nlocal;
    const bool fine = seen.insert({g.id, n[0], n[1], n[2]}).second && exact &&
                      g.type == type_of(g.id) && (ghost ? !in_local && in_halo : in_local);
    if (!fine && ++bad < 5) ADD_FAILURE() << "atom " << k << " (id " << g.id << ") is wrong";
  }
  // Ghost count between the images strictly inside and those inside or on the halo; those
  // on it are the candidates of the brute force (an owned atom's neighbours are within it).
  int inner = 0, outer = 0;
  std::vector<std::pair<GlobalId, Vec>> candidates;
  for (const HostAtom& a : global) {
    for (int i = -reach[0]; i <= reach[0]; ++i)
      for (int j = -reach[1]; j <= reach[1]; ++j)
        for (int l = -reach[2]; l <= reach[2]; ++l) {
          const std::array<int, 3> n{i, j, l};
          Vec p{};
          bool in_local = true, in = true, on = true;
          for (int d = 0; d < 3; ++d) {
            p[d] = a.x[d] + n[d] * kBox.length(d);
            in_local = in_local && p[d] >= local.lo[d] && p[d] < local.hi[d];
            in = in && p[d] > local.lo[d] - kCutoff + 1e-9 && p[d] < local.hi[d] + kCutoff - 1e-9;
            on = on && p[d] >= local.lo[d] - kCutoff - 1e-9 && p[d] < local.hi[d] + kCutoff + 1e-9;
          }
          inner += in && !in_local ? 1 : 0;
          outer += on && !in_local ? 1 : 0;
          if (on) candidates.emplace_back(a.id, p);
        }
  }
  EXPECT_GE(atoms.nghost, inner);
  EXPECT_LE(atoms.nghost, outer);

  // Every owned atom sees the same neighbours as a brute force over all images.
  for (int k = 0; k < atoms.nlocal; ++k) {
    Neighbours got, want;
    for (int m = 0; m < atoms.nall(); ++m) add_if_near(got, all[k].x, all[m].x, all[m].id);
    for (const auto& [id, y] : candidates) add_if_near(want, all[k].x, y, id);
    expect_same(got, want, all[k].id, bad);
  }
  EXPECT_EQ(bad, 0);
}

TEST(AtomExchange, GhostsHoldEveryNeighbourWithinTheCutoff) {
  for_each_migrated([](const CartDecomposition& dec, AtomExchange& exchange, AtomData& atoms,
                       const std::vector<Vec>&) {
    exchange.build_ghosts(atoms);
    check_ghosts(dec, exchange, atoms);
  });
}

// Each pair of atoms within the cutoff counted once over all ranks when a rank takes its owned
// pairs once and its owned atoms with the upper ghosts only (GhostSides, as the cluster lists
// do): each ghost's side is that of its offset from the local box (-1, 0 or +1 along x, y and
// z; upper when the first nonzero one is positive), owned atoms have none, and of the two copies
// of a pair across a face exactly one is upper.
TEST(AtomExchange, UpperGhostsHoldEachCrossingPairOnce) {
  for_each_migrated([](const CartDecomposition& dec, AtomExchange& exchange, AtomData& atoms,
                       const std::vector<Vec>&) {
    exchange.build_ghosts(atoms);
    const auto all = download(atoms, 0, atoms.nall());
    const Box local = dec.local_box(kBox);
    int bad = 0;
    for (int k = 0; k < atoms.nall(); ++k) {
      int first = 0;
      for (int d = 3; d-- > 0;) {
        const int s = all[k].x[d] < local.lo[d] ? -1 : (all[k].x[d] >= local.hi[d] ? 1 : 0);
        first = s != 0 ? s : first;
      }
      const int want =
          k < atoms.nlocal ? 0 : (first > 0 ? kernels::md::kGhostUpper : kernels::md::kGhostLower);
      if (all[k].side != want && ++bad < 5)
        ADD_FAILURE() << "atom " << k << " (id " << all[k].id << "): side " << int(all[k].side)
                      << ", expected " << want;
    }
    EXPECT_EQ(bad, 0);
    // The counted pairs as (lower id, higher id, displacement in 1e-6 units), and every owned
    // atom's neighbours (check_ghosts has them right): each pair twice among the neighbours.
    using Counted = std::tuple<GlobalId, GlobalId, long long, long long, long long>;
    std::vector<Counted> counted;
    long long neighbours = 0;
    for (int k = 0; k < atoms.nlocal; ++k)
      for (int m = 0; m < atoms.nall(); ++m) {
        Real r2 = 0;
        std::array<long long, 3> d{};
        for (int a = 0; a < 3; ++a) {
          const Real dx = all[m].x[a] - all[k].x[a];
          r2 += dx * dx;
          d[a] = std::llround(dx * 1e6);
        }
        if (m == k || r2 >= kCutoff * kCutoff) continue;
        ++neighbours;
        const bool mine = m < atoms.nlocal ? m > k : all[m].side == kernels::md::kGhostUpper;
        if (!mine) continue;
        const bool swap = all[m].id < all[k].id || (all[m].id == all[k].id && d < decltype(d){});
        const int s = swap ? -1 : 1;
        counted.emplace_back(swap ? all[m].id : all[k].id, swap ? all[k].id : all[m].id, s * d[0],
                             s * d[1], s * d[2]);
      }
    auto every = allgather(counted);
    std::sort(every.begin(), every.end());
    EXPECT_EQ(std::adjacent_find(every.begin(), every.end()), every.end())
        << "a pair counted twice";
    MPI_Allreduce(MPI_IN_PLACE, &neighbours, 1, MPI_LONG_LONG, MPI_SUM, comm());
    EXPECT_EQ(2 * static_cast<long long>(every.size()), neighbours);
  });
}

TEST(AtomExchange, UpdateGhostsFollowsTheOwners) {
  for_each_migrated([](const CartDecomposition&, AtomExchange& exchange, AtomData& atoms,
                       const std::vector<Vec>&) {
    exchange.build_ghosts(atoms);
    const auto before = download(atoms, 0, atoms.nall());
    std::map<GlobalId, Vec> old_owner;
    for (const HostAtom& a : allgather(download(atoms, 0, atoms.nlocal))) old_owner[a.id] = a.x;

    // Move the owned atoms a little (some leave the local box: no migration in between).
    auto moved = std::vector<HostAtom>(before.begin(), before.begin() + atoms.nlocal);
    for (HostAtom& a : moved) {
      for (int d = 0; d < 3; ++d) a.x[d] += 0.3 * std::sin(1.0 + a.id + 2.0 * d);
    }
    set_owned_positions(atoms, moved);
    for (int pass = 0; pass < 2; ++pass) exchange.update_ghosts(atoms);
    std::map<GlobalId, Vec> new_owner;
    for (const HostAtom& a : allgather(moved)) new_owner[a.id] = a.x;

    const auto after = download(atoms, 0, atoms.nall());
    int bad = 0;
    for (int k = 0; k < atoms.nall(); ++k) {
      bool fine = after[k].id == before[k].id && after[k].type == before[k].type;
      for (int d = 0; d < 3 && fine; ++d) {
        const Real shift = before[k].x[d] - old_owner.at(before[k].id)[d];
        fine = std::abs(after[k].x[d] - (new_owner.at(after[k].id)[d] + shift)) < 1e-9;
      }
      if (!fine && ++bad < 5) ADD_FAILURE() << "atom " << k << " (id " << after[k].id << ")";
    }
    EXPECT_EQ(bad, 0);
    if (nranks() == 1) {
      EXPECT_EQ(exchange.update_bytes(), 0);
    }
  });
}

TEST(AtomExchange, ReverseForcesAddEveryGhostToItsOwner) {
  // Each ghost row of f gets a value of its own (from its position, which differs between the
  // images of one atom); owned rows start from a value of their id. After reverse_forces an
  // owned atom must hold its start value plus the rows of all its ghosts on all ranks (a ghost
  // of an earlier axis relays those of its own copies).
  for_each_migrated([](const CartDecomposition&, AtomExchange& exchange, AtomData& atoms,
                       const std::vector<Vec>&) {
    exchange.build_ghosts(atoms);
    const auto all = download(atoms, 0, atoms.nall());
    auto row = [](const HostAtom& a, bool ghost) {
      Vec v{};
      for (int d = 0; d < 3; ++d)
        v[d] = ghost ? std::sin(3.0 * a.x[d] + d) : 0.25 * static_cast<Real>(a.id) + d;
      return v;
    };
    auto f = Kokkos::create_mirror_view(atoms.f);
    for (int k = 0; k < atoms.nall(); ++k) {
      const Vec v = row(all[k], k >= atoms.nlocal);
      for (int d = 0; d < 3; ++d) f(k, d) = v[d];
    }
    Kokkos::deep_copy(atoms.f, f);
    std::vector<HostAtom> ghosts(all.begin() + atoms.nlocal, all.end());
    std::map<GlobalId, Vec> want;
    for (int k = 0; k < atoms.nlocal; ++k) want[all[k].id] = row(all[k], false);
    for (const HostAtom& g : allgather(ghosts)) {
      const auto it = want.find(g.id);
      if (it == want.end()) continue;  // another rank's atom
      const Vec v = row(g, true);
      for (int d = 0; d < 3; ++d) it->second[d] += v[d];
    }
    exchange.reverse_forces(atoms);
    Kokkos::deep_copy(f, atoms.f);
    int bad = 0;
    for (int k = 0; k < atoms.nlocal; ++k) {
      const Vec expect = want.at(all[k].id);
      bool fine = true;
      for (int d = 0; d < 3; ++d) fine = fine && std::abs(f(k, d) - expect[d]) < 1e-12;
      if (!fine && ++bad < 5)
        ADD_FAILURE() << "atom " << k << " (id " << all[k].id << "): (" << f(k, 0) << ", "
                      << f(k, 1) << ", " << f(k, 2) << "), expected (" << expect[0] << ", "
                      << expect[1] << ", " << expect[2] << ")";
    }
    EXPECT_EQ(bad, 0);
    if (nranks() > 1) {  // the test means something: some ghosts came from elsewhere
      EXPECT_GT(atoms.nghost, 0);
    }
  });
}

TEST(AtomExchange, RepeatedStepsKeepAtomsAndGhostsRight) {
  // A run in miniature: atoms drift (across subdomains and the periodic box, several times),
  // then migrate, build_ghosts and some updates, reusing the buffers of earlier cycles.
  const CartDecomposition dec(comm(), {true, false, true}, {0, 0, 1});
  Box box = kBox;
  auto unwrapped = random_positions(box, 1500, 77);
  for (auto& u : unwrapped) u[1] = box.lo[1] + 0.5 + 0.9 * (u[1] - box.lo[1]);  // off the walls
  std::vector<HostAtom> mine;
  for (std::size_t i = 0; i < unwrapped.size(); ++i) {
    if (dec.owner_of_point(box, unwrapped[i]) != my_rank()) continue;
    const auto id = static_cast<GlobalId>(i);
    mine.push_back({unwrapped[i], velocity_of(id), {0, 0, 0}, id, type_of(id)});
  }
  AtomData atoms;
  upload(atoms, mine);
  AtomExchange exchange(dec, box, kCutoff, MpiTransport::staged);
  exchange.migrate(atoms);
  exchange.build_ghosts(atoms);
  for (int cycle = 0; cycle < 6; ++cycle) {
    SCOPED_TRACE(fmt::format("cycle {}", cycle));
    // Drift in x and z (periodic) by up to 0.9, a little in y; same for every rank.
    auto drift = [cycle](GlobalId id, int d) {
      return (d == 1 ? 0.05 : 0.9) * std::sin(0.7 * static_cast<Real>(id) + d + 3.1 * cycle);
    };
    auto owned = download(atoms, 0, atoms.nlocal);
    for (HostAtom& a : owned) {
      for (int d = 0; d < 3; ++d) a.x[d] += drift(a.id, d);
    }
    for (std::size_t i = 0; i < unwrapped.size(); ++i) {
      for (int d = 0; d < 3; ++d) unwrapped[i][d] += drift(static_cast<GlobalId>(i), d);
    }
    set_owned_positions(atoms, owned);
    exchange.update_ghosts(atoms);
    exchange.migrate(atoms);
    check_owned(dec, atoms, unwrapped);
    exchange.build_ghosts(atoms);
    exchange.update_ghosts(atoms);
    check_ghosts(dec, exchange, atoms);
  }
}

}  // namespace
}  // namespace stratus::md::test
