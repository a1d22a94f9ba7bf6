#include "stratus/io/lammps_data.hpp"

#include "stratus/core/error.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <sstream>

namespace stratus::io {

namespace {

/// The file's lines with comments removed, split into words, with their line numbers.
struct Lines {
  std::vector<std::vector<std::string>> words;
  std::vector<int> number;
  std::size_t next = 0;
};

Lines split(const std::string& text) {
  Lines out;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (n == 1) continue;  // the first line of a data file is a title
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream ws(line);
    std::vector<std::string> words;
    for (std::string w; ws >> w;) words.push_back(w);
    if (words.empty()) continue;
    out.words.push_back(std::move(words));
    out.number.push_back(n);
  }
  return out;
}

class Parser {
 public:
  Parser(const std::string& path, const std::string& text) : path_(path), lines_(split(text)) {}

  [[noreturn]] void fail(int line, const std::string& message) const {
    throw InputError(fmt::format("{}:{}: {}", path_, line, message));
  }

  template <class T>
  T number(const std::vector<std::string>& w, std::size_t k, int line, const char* what) const {
    if (k >= w.size())
      fail(line, fmt::format("expected {} as word {}, found the end of the line", what, k + 1));
    T v{};
    const auto& s = w[k];
    if constexpr (std::is_floating_point_v<T>) {
      char* end = nullptr;
      v = std::strtod(s.c_str(), &end);
      if (end != s.c_str() + s.size() || !std::isfinite(v))
        fail(line, fmt::format("expected {} (a finite number), found '{}'", what, s));
    } else {
      const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
      if (r.ec != std::errc() || r.ptr != s.data() + s.size())
        fail(line, fmt::format("expected {} (an integer), found '{}'", what, s));
    }
    return v;
  }

  AtomConfiguration parse() {
    AtomConfiguration d;
    const int end_of_header = header(d);
    std::vector<char> seen(static_cast<std::size_t>(d.natoms), 0);
    bool have_atoms = false;
    while (lines_.next < lines_.words.size()) {
      const auto& head = lines_.words[lines_.next];
      const int ln = lines_.number[lines_.next];
      ++lines_.next;
      const std::string name = head[0];
      if (name == "Masses") {
        d.masses.assign(static_cast<std::size_t>(d.ntypes), 0.0);
        for (int k = 0; k < d.ntypes; ++k) {
          const auto [w, l] = row(ln, name);
          const int t = number<int>(w, 0, l, "a type");
          if (t < 1 || t > d.ntypes)
            fail(l, fmt::format("expected a type in 1..{}, found {}", d.ntypes, t));
          d.masses[static_cast<std::size_t>(t - 1)] = number<double>(w, 1, l, "a mass");
        }
      } else if (name == "Atoms") {
        have_atoms = true;
        atoms(d, head, ln, seen);
      } else if (name == "Velocities") {
        d.velocities.assign(static_cast<std::size_t>(d.natoms), {0, 0, 0});
        for (std::int64_t k = 0; k < d.natoms; ++k) {
          const auto [w, l] = row(ln, name);
          const auto id = number<std::int64_t>(w, 0, l, "an atom id");
          if (id < 1 || id > d.natoms)
            fail(l, fmt::format("expected an atom id in 1..{}, found {}", d.natoms, id));
          for (int c = 0; c < 3; ++c)
            d.velocities[static_cast<std::size_t>(id - 1)][c] =
                number<double>(w, 1 + c, l, "a velocity");
        }
      } else {
        fail(ln,
             fmt::format("expected a section Masses, Atoms or Velocities, found '{}' (coefficients "
                         "come from the deck)",
                         fmt::join(head, " ")));
      }
    }
    if (!have_atoms) fail(end_of_header, "the file has no Atoms section");
    return d;
  }

  /// The header, up to the first section keyword: the counts and the box, checked. Returns the
  /// line where it ends (for what it lacks).
  int header(AtomConfiguration& d) {
    bool have_box[3] = {false, false, false};
    // Header: until the first section keyword.
    for (; lines_.next < lines_.words.size(); ++lines_.next) {
      const auto& w = lines_.words[lines_.next];
      const int ln = lines_.number[lines_.next];
      if (std::isalpha(static_cast<unsigned char>(w[0][0]))) break;  // a section starts
      if (w.size() == 2 && w[1] == "atoms") {
        d.natoms = number<std::int64_t>(w, 0, ln, "the number of atoms");
      } else if (w.size() == 3 && w[1] == "atom" && w[2] == "types") {
        d.ntypes = number<int>(w, 0, ln, "the number of atom types");
      } else if (w.size() == 4 && (w[2] == "xlo" || w[2] == "ylo" || w[2] == "zlo")) {
        const int a = w[2][0] - 'x';
        d.box.lo[a] = number<double>(w, 0, ln, "the low bound");
        d.box.hi[a] = number<double>(w, 1, ln, "the high bound");
        if (!(d.box.hi[a] > d.box.lo[a]))
          fail(ln, fmt::format("the box must have {} > {}", w[3], w[2]));
        have_box[a] = true;
      } else if (w.size() == 6 && w[3] == "xy") {
        fail(ln, "tilted (triclinic) boxes are not supported; expected an orthogonal box");
      } else if (w.size() >= 2 && (w[1] == "bonds" || w[1] == "angles" || w[1] == "dihedrals" ||
                                   w[1] == "impropers")) {
        if (number<std::int64_t>(w, 0, ln, "a count") != 0)
          fail(ln,
               fmt::format("molecular topology ({}) is not supported; expected atom style atomic",
                           w[1]));
      } else {
        fail(ln, fmt::format("expected a header line such as 'N atoms', 'N atom types' or "
                             "'lo hi xlo xhi', found '{}'",
                             fmt::join(w, " ")));
      }
    }
    const int end = lines_.next < lines_.number.size() ? lines_.number[lines_.next] : 1;
    if (d.natoms <= 0) fail(end, "the header must give a positive 'N atoms'");
    if (d.ntypes <= 0) fail(end, "the header must give a positive 'N atom types'");
    for (int a = 0; a < 3; ++a)
      if (!have_box[a]) fail(end, fmt::format("the header must give '{0}lo {0}hi'", "xyz"[a]));
    return end;
  }

  /// The Atoms section (its keyword line `head`, line `ln`): natoms rows 'id type x y z' with
  /// optional image counts, each id once (`seen`).
  void atoms(AtomConfiguration& d, const std::vector<std::string>& head, int ln,
             std::vector<char>& seen) {
    const std::string name = head[0];
    if (head.size() > 1 && head[1] != "atomic")
      fail(ln, fmt::format("expected atom style atomic, found '{}'", head[1]));
    d.atoms.reserve(static_cast<std::size_t>(d.natoms));
    for (std::int64_t k = 0; k < d.natoms; ++k) {
      const auto [w, l] = row(ln, name);
      if (w.size() != 5 && w.size() != 8)
        fail(l, fmt::format(
                    "expected 'id type x y z' or 'id type x y z ix iy iz' (atom style atomic), "
                    "found {} words",
                    w.size()));
      DataAtom a;
      const auto id = number<std::int64_t>(w, 0, l, "an atom id");
      if (id < 1 || id > d.natoms)
        fail(l, fmt::format("expected an atom id in 1..{}, found {}", d.natoms, id));
      if (seen[static_cast<std::size_t>(id - 1)]++)
        fail(l, fmt::format("atom id {} appears twice", id));
      a.id = id - 1;
      a.type = number<int>(w, 1, l, "an atom type") - 1;
      if (a.type < 0 || a.type >= d.ntypes)
        fail(l, fmt::format("expected an atom type in 1..{}, found {}", d.ntypes, a.type + 1));
      for (int c = 0; c < 3; ++c) a.x[c] = number<double>(w, 2 + c, l, "a coordinate");
      if (w.size() == 8)
        for (int c = 0; c < 3; ++c) a.image[c] = number<int>(w, 5 + c, l, "an image count");
      d.atoms.push_back(a);
    }
  }

 private:
  /// The next row of a section that started at line `section_line`.
  std::pair<std::vector<std::string>, int> row(int section_line, const std::string& section) {
    if (lines_.next >= lines_.words.size())
      fail(section_line, fmt::format("the {} section ends early: the file ends", section));
    const auto& w = lines_.words[lines_.next];
    const int ln = lines_.number[lines_.next];
    if (std::isalpha(static_cast<unsigned char>(w[0][0])))
      fail(ln, fmt::format("the {} section (line {}) ends early: found '{}'", section, section_line,
                           w[0]));
    ++lines_.next;
    return {w, ln};
  }

  const std::string& path_;
  Lines lines_;
};

}  // namespace

AtomConfiguration parse_lammps_data(const std::string& path, const std::string& text) {
  return Parser(path, text).parse();
}

}  // namespace stratus::io
