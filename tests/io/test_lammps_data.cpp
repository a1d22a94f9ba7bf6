// LAMMPS data files of atom styles atomic and full: the molecular topology, the coefficient
// sections, the style from the Atoms comment or the word count, and every error naming path:line.
#include "stratus/core/error.hpp"
#include "stratus/io/lammps_data.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using stratus::InputError;
using stratus::io::AtomStyle;
using stratus::io::parse_lammps_data;

namespace {

std::string parse_error(const std::string& text) {
  try {
    parse_lammps_data("x.data", text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

// Two SPC/E-like waters: O is type 1, H type 2; bonds O-H, angles H-O-H. Rows out of id order,
// image counts on some atoms, comments after rows, and the LAMMPS memory hints in the header.
const std::string kWater = R"(LAMMPS data file: two waters

6 atoms
2 atom types
4 bonds
1 bond types
2 angles
1 angle types
2 extra bond per atom
1 extra angle per atom
0 extra dihedral per atom
0 extra improper per atom
2 extra special per atom

-5.0 5.0 xlo xhi
-4.0 4.0 ylo yhi
-3.0 3.0 zlo zhi

Masses

1 15.9994 # O
2 1.008 # H

Pair Coeffs # lj/cut/coul/long

2 0.0 0.0
1 0.1553 3.166

Bond Coeffs # harmonic

1 554.1349 1.0

Angle Coeffs   #   harmonic   

1 45.7696 109.47

Atoms # full

1 1 1 -0.8476 0.0 0.0 0.0
2 1 2 0.4238 0.816 0.577 0.0
3 1 2 0.4238 -0.816 0.577 0.0 0 0 0
4 2 1 -0.8476 3.0 3.0 2.5 1 0 -1
6 2 2 0.4238 2.184 3.577 2.5
5 2 2 0.4238 3.816 3.577 2.5 1 0 -1

Velocities

1 0.1 0.2 0.3
2 0 0 0
3 0 0 0
4 0 0 0
5 0 0 0
6 -0.1 -0.2 -0.3

Bonds

2 1 1 3
1 1 1 2
3 1 4 5
4 1 4 6

Angles

1 1 2 1 3
2 1 5 4 6
)";

}  // namespace

TEST(LammpsDataFull, TwoWaters) {
  const auto d = parse_lammps_data("water.data", kWater);
  EXPECT_EQ(d.style, AtomStyle::full);
  EXPECT_EQ(d.natoms, 6);
  EXPECT_EQ(d.ntypes, 2);
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(d.box.lo[a], -5.0 + a);
    EXPECT_EQ(d.box.hi[a], 5.0 - a);
  }
  EXPECT_EQ(d.masses, (std::vector<double>{15.9994, 1.008}));

  ASSERT_EQ(d.atoms.size(), 6u);
  const std::vector<std::int64_t> ids{0, 1, 2, 3, 5, 4};  // file order
  const std::vector<std::int64_t> molecules{1, 1, 1, 2, 2, 2};
  const std::vector<int> types{0, 1, 1, 0, 1, 1};
  const std::vector<double> charges{-0.8476, 0.4238, 0.4238, -0.8476, 0.4238, 0.4238};
  const std::vector<std::array<double, 3>> x{{0.0, 0.0, 0.0},      {0.816, 0.577, 0.0},
                                             {-0.816, 0.577, 0.0}, {3.0, 3.0, 2.5},
                                             {2.184, 3.577, 2.5},  {3.816, 3.577, 2.5}};
  const std::vector<std::array<int, 3>> images{{0, 0, 0},  {0, 0, 0}, {0, 0, 0},
                                               {1, 0, -1}, {0, 0, 0}, {1, 0, -1}};
  for (std::size_t i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(d.atoms[i].id, ids[i]);
    EXPECT_EQ(d.atoms[i].molecule, molecules[i]);
    EXPECT_EQ(d.atoms[i].type, types[i]);
    EXPECT_EQ(d.atoms[i].charge, charges[i]);
    EXPECT_EQ(d.atoms[i].x, x[i]);
    EXPECT_EQ(d.atoms[i].image, images[i]);
  }
  ASSERT_EQ(d.velocities.size(), 6u);
  EXPECT_EQ(d.velocities[0], (std::array<double, 3>{0.1, 0.2, 0.3}));
  EXPECT_EQ(d.velocities[5], (std::array<double, 3>{-0.1, -0.2, -0.3}));

  const auto& t = d.topology;
  EXPECT_EQ(t.bond_types, 1);
  EXPECT_EQ(t.angle_types, 1);
  EXPECT_EQ(t.dihedral_types, 0);
  EXPECT_EQ(t.improper_types, 0);
  // Stored by id: bonds[k] is the file's bond k + 1, whatever the row order.
  ASSERT_EQ(t.bonds.size(), 4u);
  const std::vector<std::array<std::int64_t, 2>> bonded{{0, 1}, {0, 2}, {3, 4}, {3, 5}};
  const std::vector<int> bond_lines{58, 57, 59, 60};
  for (std::size_t b = 0; b < 4; ++b) {
    SCOPED_TRACE(b);
    EXPECT_EQ(t.bonds[b].type, 0);
    EXPECT_EQ(t.bonds[b].atoms, bonded[b]);
    EXPECT_EQ(t.bonds[b].line, bond_lines[b]);
  }
  ASSERT_EQ(t.angles.size(), 2u);
  EXPECT_EQ(t.angles[0].type, 0);
  EXPECT_EQ(t.angles[0].atoms, (std::array<std::int64_t, 3>{1, 0, 2}));
  EXPECT_EQ(t.angles[0].line, 64);
  EXPECT_EQ(t.angles[1].atoms, (std::array<std::int64_t, 3>{4, 3, 5}));
  EXPECT_EQ(t.angles[1].line, 65);
  EXPECT_TRUE(t.dihedrals.empty());
  EXPECT_TRUE(t.impropers.empty());

  EXPECT_EQ(t.pair_coeffs.style, "lj/cut/coul/long");
  EXPECT_EQ(t.pair_coeffs.line, 24);
  ASSERT_EQ(t.pair_coeffs.rows.size(), 2u);
  EXPECT_EQ(t.pair_coeffs.rows[0].type, 0);
  EXPECT_EQ(t.pair_coeffs.rows[0].type2, 0);
  EXPECT_EQ(t.pair_coeffs.rows[0].values, (std::vector<double>{0.1553, 3.166}));
  EXPECT_EQ(t.pair_coeffs.rows[0].line, 27);
  EXPECT_EQ(t.pair_coeffs.rows[1].type, 1);
  EXPECT_EQ(t.pair_coeffs.rows[1].type2, 1);
  EXPECT_EQ(t.pair_coeffs.rows[1].values, (std::vector<double>{0.0, 0.0}));
  EXPECT_EQ(t.pair_coeffs.rows[1].line, 26);

  EXPECT_TRUE(t.bond_coeffs.present());
  EXPECT_EQ(t.bond_coeffs.style, "harmonic");
  EXPECT_EQ(t.bond_coeffs.line, 29);
  ASSERT_EQ(t.bond_coeffs.rows.size(), 1u);
  EXPECT_EQ(t.bond_coeffs.rows[0].type, 0);
  EXPECT_EQ(t.bond_coeffs.rows[0].values, (std::vector<double>{554.1349, 1.0}));
  EXPECT_EQ(t.bond_coeffs.rows[0].line, 31);
  EXPECT_EQ(t.angle_coeffs.style, "harmonic");  // the comment trimmed
  EXPECT_EQ(t.angle_coeffs.line, 33);
  ASSERT_EQ(t.angle_coeffs.rows.size(), 1u);
  EXPECT_EQ(t.angle_coeffs.rows[0].values, (std::vector<double>{45.7696, 109.47}));
  EXPECT_FALSE(t.dihedral_coeffs.present());
  EXPECT_TRUE(t.dihedral_coeffs.rows.empty());
  EXPECT_FALSE(t.improper_coeffs.present());
}

// A united-atom butane (CH3-CH2-CH2-CH3) with one dihedral and one improper; the Atoms section
// comes after the topology, has no comment (10 words: full) and PairIJ Coeffs are out of order.
TEST(LammpsDataFull, ButaneChain) {
  const std::string text = R"(butane
4 atoms
2 atom types
3 bonds
2 angles
1 dihedrals
1 impropers
1 bond types
1 angle types
1 dihedral types
1 improper types
0 10 xlo xhi
0 10 ylo yhi
0 10 zlo zhi
PairIJ Coeffs # lj/cut
2 2 0.091 3.95
1 2 0.138 3.85
1 1 0.195 3.75
Dihedral Coeffs # opls
1 1.411 -0.271 3.145 0.0
Improper Coeffs # harmonic
1 10.0 0.0
Bonds
1 1 1 2
2 1 2 3
3 1 3 4
Angles
1 1 1 2 3
2 1 2 3 4
Dihedrals
1 1 1 2 3 4
Impropers
1 1 2 1 3 4
Atoms
4 7 1 0.0 4.5 1.2 0.0 0 0 0
3 7 2 0.0 3.0 1.9 0.5 0 0 0
2 7 2 0.0 1.5 1.2 0.0 0 -1 0
1 7 1 0.0 0.0 1.9 0.5 2 0 0
)";
  const auto d = parse_lammps_data("butane.data", text);
  EXPECT_EQ(d.style, AtomStyle::full);
  ASSERT_EQ(d.atoms.size(), 4u);
  EXPECT_EQ(d.atoms[0].id, 3);
  EXPECT_EQ(d.atoms[0].molecule, 7);
  EXPECT_EQ(d.atoms[0].type, 0);
  EXPECT_EQ(d.atoms[0].charge, 0.0);
  EXPECT_EQ(d.atoms[0].x, (std::array<double, 3>{4.5, 1.2, 0.0}));
  EXPECT_EQ(d.atoms[2].image, (std::array<int, 3>{0, -1, 0}));
  EXPECT_EQ(d.atoms[3].id, 0);
  EXPECT_EQ(d.atoms[3].image, (std::array<int, 3>{2, 0, 0}));
  EXPECT_TRUE(d.masses.empty());
  EXPECT_TRUE(d.velocities.empty());

  const auto& t = d.topology;
  EXPECT_EQ(t.bond_types, 1);
  EXPECT_EQ(t.angle_types, 1);
  EXPECT_EQ(t.dihedral_types, 1);
  EXPECT_EQ(t.improper_types, 1);
  ASSERT_EQ(t.bonds.size(), 3u);
  for (std::size_t b = 0; b < 3; ++b)
    EXPECT_EQ(t.bonds[b].atoms,
              (std::array<std::int64_t, 2>{std::int64_t(b), std::int64_t(b + 1)}));
  ASSERT_EQ(t.angles.size(), 2u);
  EXPECT_EQ(t.angles[1].atoms, (std::array<std::int64_t, 3>{1, 2, 3}));
  ASSERT_EQ(t.dihedrals.size(), 1u);
  EXPECT_EQ(t.dihedrals[0].type, 0);
  EXPECT_EQ(t.dihedrals[0].atoms, (std::array<std::int64_t, 4>{0, 1, 2, 3}));
  EXPECT_EQ(t.dihedrals[0].line, 31);
  ASSERT_EQ(t.impropers.size(), 1u);
  EXPECT_EQ(t.impropers[0].atoms, (std::array<std::int64_t, 4>{1, 0, 2, 3}));
  EXPECT_EQ(t.impropers[0].line, 33);

  // PairIJ rows in the order (1,1), (1,2), (2,2) (0-based (0,0), (0,1), (1,1)).
  const auto& p = t.pair_coeffs;
  EXPECT_EQ(p.style, "lj/cut");
  EXPECT_EQ(p.line, 15);
  ASSERT_EQ(p.rows.size(), 3u);
  const std::vector<std::array<int, 2>> pairs{{0, 0}, {0, 1}, {1, 1}};
  const std::vector<std::vector<double>> values{{0.195, 3.75}, {0.138, 3.85}, {0.091, 3.95}};
  const std::vector<int> lines{18, 17, 16};
  for (std::size_t r = 0; r < 3; ++r) {
    SCOPED_TRACE(r);
    EXPECT_EQ(p.rows[r].type, pairs[r][0]);
    EXPECT_EQ(p.rows[r].type2, pairs[r][1]);
    EXPECT_EQ(p.rows[r].values, values[r]);
    EXPECT_EQ(p.rows[r].line, lines[r]);
  }
  EXPECT_EQ(t.dihedral_coeffs.style, "opls");
  ASSERT_EQ(t.dihedral_coeffs.rows.size(), 1u);
  EXPECT_EQ(t.dihedral_coeffs.rows[0].values, (std::vector<double>{1.411, -0.271, 3.145, 0.0}));
  EXPECT_EQ(t.improper_coeffs.style, "harmonic");
  EXPECT_EQ(t.improper_coeffs.rows[0].values, (std::vector<double>{10.0, 0.0}));
  EXPECT_FALSE(t.bond_coeffs.present());
}

namespace {

const std::string kBox = "0 2 xlo xhi\n0 2 ylo yhi\n0 2 zlo zhi\n";

}  // namespace

// Without a comment the first row's word count gives the style: 5 or 8 words atomic, 7 or 10
// full; rows with and without image counts mix.
TEST(LammpsDataFull, StyleFromTheWordCount) {
  const auto atomic = parse_lammps_data(
      "a.data", "t\n2 atoms\n1 atom types\n" + kBox + "Atoms\n1 1 0.5 0.5 0.5\n2 1 1 1 1 0 0 1\n");
  EXPECT_EQ(atomic.style, AtomStyle::atomic);
  EXPECT_EQ(atomic.atoms[1].x, (std::array<double, 3>{1, 1, 1}));
  EXPECT_EQ(atomic.atoms[1].image, (std::array<int, 3>{0, 0, 1}));
  EXPECT_EQ(atomic.atoms[1].molecule, 0);
  EXPECT_EQ(atomic.atoms[1].charge, 0.0);
  EXPECT_TRUE(atomic.topology.bonds.empty());

  const auto full = parse_lammps_data("f.data", "t\n2 atoms\n1 atom types\n" + kBox +
                                                    "Atoms\n1 3 1 -1 0 0 0\n2 0 1 1 1 1 1 0 0 1\n");
  EXPECT_EQ(full.style, AtomStyle::full);
  EXPECT_EQ(full.atoms[0].molecule, 3);
  EXPECT_EQ(full.atoms[0].charge, -1.0);
  EXPECT_EQ(full.atoms[1].molecule, 0);
  EXPECT_EQ(full.atoms[1].x, (std::array<double, 3>{1, 1, 1}));
  EXPECT_EQ(full.atoms[1].image, (std::array<int, 3>{0, 0, 1}));

  // The comment says atomic: 5 or 8 words.
  const auto said = parse_lammps_data(
      "s.data", "t\n1 atoms\n1 atom types\n" + kBox + "Atoms # atomic\n1 1 0.5 0.5 0.5\n");
  EXPECT_EQ(said.style, AtomStyle::atomic);
}

namespace {

// Lines 1..13 of a file of three atoms with two bonds; the bond rows follow from line 14.
const std::string kBonded = "t\n3 atoms\n1 atom types\n2 bonds\n1 bond types\n" + kBox +
                            "Atoms # full\n1 1 1 0.5 0 0 0\n2 1 1 -0.5 1 0 0\n3 1 1 0 1 1 0\n"
                            "Bonds\n";

}  // namespace

TEST(LammpsDataFull, AtomsErrors) {
  const std::string head = "t\n2 atoms\n1 atom types\n" + kBox;  // lines 1..6
  EXPECT_EQ(parse_error(head + "Atoms # charge\n1 1 0 0 0 0\n2 1 0 1 1 1\n"),
            "x.data:7: expected atom style atomic or full after 'Atoms #', found 'charge'");
  EXPECT_EQ(parse_error(head + "Atoms\n1 1 0 0 0 0\n2 1 0 1 1 1\n"),
            "x.data:8: expected 5 or 8 words (atom style atomic: 'id type x y z [ix iy iz]') or 7 "
            "or 10 (atom style full: 'id molecule type q x y z [ix iy iz]'), found 6 words");
  EXPECT_EQ(parse_error(head + "Atoms\n1 1 1 0 0 0 0\n2 1 1 1 1\n"),
            "x.data:9: expected 7 or 10 words ('id molecule type q x y z [ix iy iz]': atom style "
            "full, as the first row has 7 words), found 5 words");
  EXPECT_EQ(parse_error(head + "Atoms\n1 1 0 0 0\n2 1 1 0 1 1 1\n"),
            "x.data:9: expected 5 or 8 words ('id type x y z [ix iy iz]': atom style atomic, as "
            "the first row has 5 words), found 7 words");
  EXPECT_EQ(parse_error(head + "Atoms # full\n1 1 0 0 0\n2 1 1 1 1\n"),
            "x.data:8: expected 7 or 10 words ('id molecule type q x y z [ix iy iz]': atom style "
            "full, as the section's comment says), found 5 words");
  EXPECT_EQ(parse_error(head + "Atoms # atomic\n1 1 1 0 0 0 0\n2 1 1 0 1 1 1\n"),
            "x.data:8: expected 5 or 8 words ('id type x y z [ix iy iz]': atom style atomic, as "
            "the section's comment says), found 7 words");
  EXPECT_EQ(parse_error(head + "Atoms # full\n1 -1 1 0 0 0 0\n2 1 1 0 1 1 1\n"),
            "x.data:8: expected a molecule id >= 0, found -1");
  EXPECT_EQ(parse_error(head + "Atoms # full\n1 1.5 1 0 0 0 0\n2 1 1 0 1 1 1\n"),
            "x.data:8: expected a molecule id (an integer), found '1.5'");
  EXPECT_EQ(parse_error(head + "Atoms # full\n1 1 1 0 0 0 0\n2 1 1 nan 1 1 1\n"),
            "x.data:9: expected a charge (a finite number), found 'nan'");
  EXPECT_EQ(parse_error(head + "Atoms # full\n1 1 2 0 0 0 0\n2 1 1 0 1 1 1\n"),
            "x.data:8: expected an atom type in 1..1, found 2");
  EXPECT_EQ(parse_error(head + "Atoms # full\n1 1 1 0 0 0 0\n1 1 1 0 1 1 1\n"),
            "x.data:9: atom id 1 appears twice");
  EXPECT_EQ(parse_error(head + "Atoms\n1 1 0 0 0\n2 1 1 1 1\n3 1 2 2 2\n"),
            "x.data:10: expected a section keyword, found the row '3 1 2 2 2': the Atoms section "
            "(line 7) has 2 rows, as the header declares");
}

TEST(LammpsDataFull, BondedTermErrors) {
  EXPECT_EQ(parse_error(kBonded + "1 1 1 2\n2 1 2 3\n"), "accepted");
  EXPECT_EQ(parse_error(kBonded + "1 1 1 2\n2 1 2 17\n"),
            "x.data:15: bond 2 names atom 17; the file has atoms 1..3");
  EXPECT_EQ(parse_error(kBonded + "1 1 0 2\n2 1 2 3\n"),
            "x.data:14: bond 1 names atom 0; the file has atoms 1..3");
  EXPECT_EQ(parse_error(kBonded + "1 1 1 2\n2 1 2 2\n"),
            "x.data:15: bond 2 names atom 2 twice; expected 2 distinct atoms");
  EXPECT_EQ(parse_error(kBonded + "1 1 1 2\n1 1 2 3\n"), "x.data:15: bond id 1 appears twice");
  EXPECT_EQ(parse_error(kBonded + "1 1 1 2\n3 1 2 3\n"),
            "x.data:15: expected a bond id in 1..2, found 3");
  EXPECT_EQ(parse_error(kBonded + "1 2 1 2\n2 1 2 3\n"),
            "x.data:14: expected a bond type in 1..1, found 2");
  EXPECT_EQ(parse_error(kBonded + "1 1 1 2 3\n2 1 2 3\n"),
            "x.data:14: expected 'id type atom1 atom2' (4 words), found 5 words");
  EXPECT_EQ(parse_error(kBonded + "1 1 1 x\n2 1 2 3\n"),
            "x.data:14: expected an atom id (an integer), found 'x'");
  EXPECT_EQ(parse_error(kBonded + "1 1 1 2\nVelocities\n"),
            "x.data:15: the Bonds section (line 13) ends early: found 'Velocities'");
  EXPECT_EQ(parse_error(kBonded + "1 1 1 2\n2 1 2 3\n3 1 1 3\n"),
            "x.data:16: expected a section keyword, found the row '3 1 1 3': the Bonds section "
            "(line 13) has 2 rows, as the header declares");
  EXPECT_EQ(parse_error(kBonded + "1 1 1 2\n2 1 2 3\nBonds\n1 1 1 2\n2 1 2 3\n"),
            "x.data:16: expected one Bonds section, found a second (the first is at line 13)");

  // Angles, dihedrals and impropers: the same checks, with their own names and sizes.
  const std::string topo =
      "t\n4 atoms\n1 atom types\n1 angles\n1 angle types\n1 dihedrals\n"
      "1 dihedral types\n1 impropers\n1 improper types\n" +
      kBox + "Atoms\n1 1 0 0 0\n2 1 1 0 0\n3 1 1 1 0\n4 1 1 1 1\n";  // 1..17
  const std::string angles = "Angles\n1 1 1 2 3\n";                  // 18..19
  const std::string dihedrals = "Dihedrals\n1 1 1 2 3 4\n";          // 20..21
  EXPECT_EQ(parse_error(topo + angles + dihedrals + "Impropers\n1 1 1 2 3 4\n"), "accepted");
  EXPECT_EQ(parse_error(topo + "Angles\n1 1 1 2 1\n"),
            "x.data:19: angle 1 names atom 1 twice; expected 3 distinct atoms");
  EXPECT_EQ(parse_error(topo + "Angles\n1 1 1 2\n"),
            "x.data:19: expected 'id type atom1 atom2 atom3' (5 words), found 4 words");
  EXPECT_EQ(parse_error(topo + angles + "Dihedrals\n1 1 1 2 3 5\n"),
            "x.data:21: dihedral 1 names atom 5; the file has atoms 1..4");
  EXPECT_EQ(parse_error(topo + angles + "Dihedrals\n1 2 1 2 3 4\n"),
            "x.data:21: expected a dihedral type in 1..1, found 2");
  EXPECT_EQ(parse_error(topo + angles + dihedrals + "Impropers\n1 1 4 2 3 4\n"),
            "x.data:23: improper 1 names atom 4 twice; expected 4 distinct atoms");
  EXPECT_EQ(parse_error(topo + angles + dihedrals + "Impropers\n2 1 1 2 3 4\n"),
            "x.data:23: expected an improper id in 1..1, found 2");
}

TEST(LammpsDataFull, CountErrors) {
  const std::string atoms = "Atoms\n1 1 0 0 0\n2 1 1 1 1\n";
  // A count without its section: the count's line.
  EXPECT_EQ(parse_error("t\n2 atoms\n1 atom types\n4 bonds\n1 bond types\n" + kBox + atoms),
            "x.data:4: the header declares 4 bonds but the file has no Bonds section");
  EXPECT_EQ(parse_error("t\n2 atoms\n1 atom types\n1 impropers\n1 improper types\n" + kBox + atoms),
            "x.data:4: the header declares 1 impropers but the file has no Impropers section");
  // A section without its count (absent or 0).
  EXPECT_EQ(parse_error("t\n2 atoms\n1 atom types\n" + kBox + atoms + "Bonds\n1 1 1 2\n"),
            "x.data:10: found a Bonds section but the header declares no bonds (expected 'N "
            "bonds' with N > 0)");
  EXPECT_EQ(parse_error("t\n2 atoms\n1 atom types\n0 angles\n" + kBox + atoms + "Angles\n"),
            "x.data:11: found an Angles section but the header declares no angles (expected 'N "
            "angles' with N > 0)");
  // Terms without types; negative counts.
  EXPECT_EQ(parse_error("t\n2 atoms\n1 atom types\n1 bonds\n" + kBox + atoms + "Bonds\n1 1 1 2\n"),
            "x.data:4: the header declares 1 bonds but no bond types (expected 'N bond types' "
            "with N > 0)");
  EXPECT_EQ(parse_error("t\n2 atoms\n1 atom types\n-1 dihedrals\n" + kBox + atoms),
            "x.data:4: expected a count >= 0, found -1");
  EXPECT_EQ(parse_error("t\n2 atoms\n1 atom types\n2 bond\n" + kBox + atoms),
            "x.data:4: expected a header line such as 'N atoms', 'N atom types' or 'lo hi xlo "
            "xhi', found '2 bond'");
  EXPECT_EQ(parse_error("t\n2 atoms\n1 atom types\n2 extra bond per atom\n1 extra special per "
                        "atom\n" +
                        kBox + atoms),
            "accepted");
  EXPECT_EQ(parse_error("t\n2 atoms\n1 atom types\n1 extra bonds per atom\n" + kBox + atoms),
            "x.data:4: expected a header line such as 'N atoms', 'N atom types' or 'lo hi xlo "
            "xhi', found '1 extra bonds per atom'");
  EXPECT_EQ(parse_error("t\n2 atoms\n1 atom types\n0 0 0 xy xz yz\n" + kBox + atoms),
            "x.data:4: tilted (triclinic) boxes are not supported; expected an orthogonal box");
}

TEST(LammpsDataFull, SectionErrors) {
  const std::string head = "t\n2 atoms\n2 atom types\n1 bonds\n1 bond types\n" + kBox;  // 1..8
  const std::string atoms = "Atoms\n1 1 0 0 0\n2 2 1 1 1\nBonds\n1 1 1 2\n";            // 9..13
  EXPECT_EQ(parse_error(head + atoms + "Foo Bar\n1 2\n"),
            "x.data:14: expected a section (Masses, Atoms, Velocities, Bonds, Angles, Dihedrals, "
            "Impropers, Pair Coeffs, PairIJ Coeffs, Bond Coeffs, Angle Coeffs, Dihedral Coeffs, "
            "Improper Coeffs), found 'Foo Bar'");
  EXPECT_EQ(parse_error(head + "Masses\n1 1\n2 2\n" + atoms + "Masses # again\n1 1\n2 2\n"),
            "x.data:17: expected one Masses section, found a second (the first is at line 9)");
  EXPECT_EQ(parse_error(head + "Masses\n1 1\n1 2\n" + atoms), "x.data:11: type 1 appears twice");
  EXPECT_EQ(parse_error(head + atoms + "Velocities\n2 0 0 0\n2 1 1 1\n"),
            "x.data:16: atom id 2 appears twice");
  // Coefficient sections: one row per type, each once, in range, numbers.
  EXPECT_EQ(parse_error(head + atoms + "Pair Coeffs\n1 1 1\n2 1 1\n"), "accepted");
  EXPECT_EQ(parse_error(head + atoms + "Pair Coeffs\n1 1 1\n1 1 1\n"),
            "x.data:16: type 1 appears twice");
  EXPECT_EQ(parse_error(head + atoms + "Pair Coeffs\n1 1 1\n3 1 1\n"),
            "x.data:16: expected an atom type in 1..2, found 3");
  EXPECT_EQ(parse_error(head + atoms + "Pair Coeffs\n1 1 1\nAtoms\n"),
            "x.data:16: the Pair Coeffs section (line 14) ends early: found 'Atoms'");
  EXPECT_EQ(parse_error(head + atoms + "Bond Coeffs # hybrid\n1 harmonic 1 1\n"),
            "x.data:15: expected a coefficient (a finite number), found 'harmonic'");
  EXPECT_EQ(parse_error(head + atoms + "Bond Coeffs\n2 1 1\n"),
            "x.data:15: expected a bond type in 1..1, found 2");
  EXPECT_EQ(parse_error(head + atoms + "Angle Coeffs # harmonic\n1 1 1\n"),
            "x.data:14: found an Angle Coeffs section but the header declares no angle types "
            "(expected 'N angle types' with N > 0)");
  EXPECT_EQ(parse_error(head + atoms + "Improper Coeffs\n"),
            "x.data:14: found an Improper Coeffs section but the header declares no improper "
            "types (expected 'N improper types' with N > 0)");
  EXPECT_EQ(parse_error(head + atoms + "PairIJ Coeffs\n1 1 1\n1 2 1\n2 2 1\n"), "accepted");
  EXPECT_EQ(parse_error(head + atoms + "PairIJ Coeffs\n1 1 1\n2 1 1\n2 2 1\n"),
            "x.data:16: expected the types in order (t1 <= t2), found 2 1");
  EXPECT_EQ(parse_error(head + atoms + "PairIJ Coeffs\n1 1 1\n1 2 1\n1 2 1\n"),
            "x.data:17: types 1 2 appear twice");
  EXPECT_EQ(parse_error(head + atoms + "PairIJ Coeffs\n1 1 1\n1 3 1\n2 2 1\n"),
            "x.data:16: expected a second atom type in 1..2, found 3");
  EXPECT_EQ(parse_error(head + atoms + "PairIJ Coeffs\n1 1 1\n1 2 1\n"),
            "x.data:14: the PairIJ Coeffs section ends early: the file ends");
  EXPECT_EQ(parse_error(head + atoms +
                        "Pair Coeffs\n1 1 1\n2 1 1\nPairIJ Coeffs\n1 1 1\n1 2 1\n"
                        "2 2 1\n"),
            "x.data:17: expected Pair Coeffs or PairIJ Coeffs, found both (Pair Coeffs at line "
            "14)");
}
