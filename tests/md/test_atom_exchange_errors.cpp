// AtomExchange errors: an atom that moved too far, left through a wall or blew up is reported
// on every rank with its id and position; a subdomain thinner than the ghost cutoff is an input
// error; updates need a plan of the same atoms.
#include "atom_exchange_util.hpp"
#include "stratus/core/error.hpp"
#include "stratus/solvers/md/atom_exchange.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace stratus::md::test {
namespace {

// Runs `body` on every rank, expecting an E on every rank; returns this rank's message.
template <class E, class F>
std::string expect_throw_everywhere(F&& body) {
  std::string message;
  int threw = 0;
  try {
    body();
  } catch (const E& e) {
    threw = 1;
    message = e.what();
  }
  int all = 0;
  MPI_Allreduce(&threw, &all, 1, MPI_INT, MPI_MIN, comm());
  EXPECT_EQ(all, 1) << "some rank did not throw";
  return message;
}

TEST(AtomExchange, AtomTwoSubdomainsAwayIsReportedOnEveryRank) {
  if (nranks() < 3) GTEST_SKIP() << "needs three or more ranks along an axis";
  for (const bool periodic : {true, false}) {
    const CartDecomposition dec(comm(), {periodic, true, true}, {nranks(), 1, 1});
    const Box local = dec.local_box(kBox);
    const Real width = local.length(0);
    AtomData atoms;
    // Rank 0 holds an atom two blocks up; periodic, first one two blocks down via the wrap.
    std::vector<HostAtom> list;
    if (my_rank() == 0) {
      if (periodic) list.push_back({{kBox.lo[0] - 1.5 * width, 2.0, 3.0}, {}, {}, 40, 0});
      list.push_back({{kBox.lo[0] + 2.5 * width, 2.0, 3.0}, {}, {}, 41, 0});
    }
    upload(atoms, list);
    AtomExchange exchange(dec, kBox, kCutoff, MpiTransport::direct);
    const std::string msg = expect_throw_everywhere<RuntimeError>([&] { exchange.migrate(atoms); });
    EXPECT_NE(msg.find(periodic ? "atom 40 at (" : "atom 41 at ("), std::string::npos) << msg;
    EXPECT_NE(msg.find("more than one subdomain along x"), std::string::npos) << msg;
  }
}

TEST(AtomExchange, LeavingThroughAWallOrBlowingUpIsReportedOnEveryRank) {
  const CartDecomposition dec(comm(), {true, false, true}, {0, 0, 1});
  const Box local = dec.local_box(kBox);
  const Vec inside{local.lo[0], local.lo[1], local.lo[2]};
  for (int which = 0; which < 3; ++which) {
    Vec x = inside;
    if (which == 0) x[1] = kBox.hi[1];         // exactly at hi is outside [lo, hi)
    if (which == 1) x[1] = kBox.lo[1] - 1e-3;  // just below the lower wall
    if (which == 2) x[2] = std::nan("");       // blown up
    AtomData atoms;
    std::vector<HostAtom> list;
    if (my_rank() == nranks() - 1) list.push_back({x, {}, {}, 123456789012LL + which, 0});
    upload(atoms, list);
    AtomExchange exchange(dec, kBox, kCutoff, MpiTransport::direct);
    const std::string msg = expect_throw_everywhere<RuntimeError>([&] { exchange.migrate(atoms); });
    EXPECT_NE(msg.find(fmt::format("atom {} at (", 123456789012LL + which)), std::string::npos)
        << msg;
    EXPECT_NE(msg.find(which == 2 ? "non-finite" : "non-periodic y wall"), std::string::npos)
        << msg;
  }
}

TEST(AtomExchange, SubdomainThinnerThanTheCutoffIsAnInputError) {
  // All ranks along z (length 9): 4 ranks make blocks of 2.25 < 2.5; at 1 and 2 ranks a
  // shorter box does it.
  const Box box{{0, 0, 0}, {10, 10, nranks() == 4 ? 9.0 : 2.0 * nranks()}};
  const CartDecomposition dec(comm(), {true, true, true}, {1, 1, nranks()});
  const std::string msg = expect_throw_everywhere<InputError>(
      [&] { AtomExchange exchange(dec, box, kCutoff, MpiTransport::direct); });
  EXPECT_NE(msg.find("along z"), std::string::npos) << msg;
  EXPECT_NE(msg.find(fmt::format("{}", box.length(2) / nranks())), std::string::npos) << msg;
  EXPECT_NE(msg.find("2.5"), std::string::npos) << msg;
  const auto fit = static_cast<int>(box.length(2) / kCutoff);
  const std::string says = fit == 0   ? "too short"
                           : fit == 1 ? "only 1 rank fits"
                                      : fmt::format("at most {} ranks fit", fit);
  EXPECT_NE(msg.find(says), std::string::npos) << msg;
  // A thin non-periodic axis on one rank exchanges nothing: accepted.
  const CartDecomposition walls(comm(), {true, true, false}, {0, 0, 1});
  const Box thin{{0, 0, 0}, {10, 10, 1}};
  EXPECT_NO_THROW(AtomExchange(walls, thin, kCutoff, MpiTransport::direct));
}

TEST(AtomExchange, UpdateNeedsAPlanOfTheSameAtoms) {
  const CartDecomposition dec(comm(), {true, true, true});
  AtomData atoms;
  upload(atoms, {});
  AtomExchange exchange(dec, kBox, kCutoff, MpiTransport::direct);
  EXPECT_THROW(exchange.update_ghosts(atoms), RuntimeError);
  exchange.build_ghosts(atoms);
  EXPECT_NO_THROW(exchange.update_ghosts(atoms));
  atoms.nghost += 1;
  EXPECT_THROW(exchange.update_ghosts(atoms), RuntimeError);
  atoms.nghost -= 1;
  exchange.migrate(atoms);
  EXPECT_THROW(exchange.update_ghosts(atoms), RuntimeError);
}

}  // namespace
}  // namespace stratus::md::test
