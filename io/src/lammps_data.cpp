// LAMMPS data files: the header, then sections of rows. Every check throws InputError
// "path:line: what was expected, what was found".
#include "stratus/io/lammps_data.hpp"

#include "stratus/core/error.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace stratus::io {

namespace {

/// One line with words: its words (the comment removed), the comment after '#' (trimmed; a
/// section keyword's style, "Atoms # full"), and its number in the file.
struct Line {
  std::vector<std::string> words;
  std::string comment;
  int number = 0;
};

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

/// The file's lines that have words, after its first line (a title).
std::vector<Line> split(const std::string& text) {
  std::vector<Line> out;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (n == 1) continue;
    Line l;
    l.number = n;
    if (const auto hash = line.find('#'); hash != std::string::npos) {
      l.comment = trim(line.substr(hash + 1));
      line.resize(hash);
    }
    std::istringstream ws(line);
    for (std::string w; ws >> w;) l.words.push_back(w);
    if (!l.words.empty()) out.push_back(std::move(l));
  }
  return out;
}

std::string join(const std::vector<std::string>& w, std::size_t from = 0) {
  std::string s;
  for (std::size_t k = from; k < w.size(); ++k) s += (k > from ? " " : "") + w[k];
  return s;
}

bool is_keyword(const Line& l) { return std::isalpha(static_cast<unsigned char>(l.words[0][0])); }

/// "a bond", "an angle": the noun with its article.
std::string with_article(const std::string& noun) {
  const char first = static_cast<char>(std::tolower(static_cast<unsigned char>(noun[0])));
  return (std::string("aeiou").find(first) != std::string::npos ? "an " : "a ") + noun;
}

/// The four kinds of bonded terms, in the order that Parser::terms_ and term_types() use.
struct TermKind {
  const char* one;      ///< "bond"
  const char* many;     ///< "bonds"
  const char* section;  ///< "Bonds"
  const char* coeffs;   ///< "Bond Coeffs"
};
constexpr std::array<TermKind, 4> kKinds{
    {{"bond", "bonds", "Bonds", "Bond Coeffs"},
     {"angle", "angles", "Angles", "Angle Coeffs"},
     {"dihedral", "dihedrals", "Dihedrals", "Dihedral Coeffs"},
     {"improper", "impropers", "Impropers", "Improper Coeffs"}}};

constexpr const char* kSections =
    "Masses, Atoms, Velocities, Bonds, Angles, Dihedrals, Impropers, Pair Coeffs, PairIJ Coeffs, "
    "Bond Coeffs, Angle Coeffs, Dihedral Coeffs, Improper Coeffs";

/// Ids 1..n, each at most once.
class Once {
 public:
  explicit Once(std::int64_t n) : seen_(static_cast<std::size_t>(n), 0) {}
  /// True when `id` (1-based, in range) was seen before; else marks it seen.
  bool repeated(std::int64_t id) {
    return std::exchange(seen_[static_cast<std::size_t>(id - 1)], 1) != 0;
  }

 private:
  std::vector<unsigned char> seen_;
};

class Parser {
 public:
  Parser(const std::string& path, const std::string& text) : path_(path), lines_(split(text)) {}

  AtomConfiguration parse() {
    header();
    while (next_ < lines_.size()) section(lines_[next_++]);
    finish();
    return std::move(d_);
  }

 private:
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

  /// An integer word that must lie in lo..hi: "expected <what> in lo..hi, found v".
  template <class T>
  T in_range(const std::vector<std::string>& w, std::size_t k, int line, const std::string& what,
             T lo, T hi) const {
    const T v = number<T>(w, k, line, what.c_str());
    if (v < lo || v > hi)
      fail(line, fmt::format("expected {} in {}..{}, found {}", what, lo, hi, v));
    return v;
  }

  /// A header count: an integer >= 0.
  std::int64_t count(const std::vector<std::string>& w, int line) const {
    const auto n = number<std::int64_t>(w, 0, line, "a count");
    if (n < 0) fail(line, fmt::format("expected a count >= 0, found {}", n));
    return n;
  }

  /// The header, up to the first section keyword: the counts and the box, checked.
  void header() {
    bool have_box[3] = {false, false, false};
    for (; next_ < lines_.size() && !is_keyword(lines_[next_]); ++next_) {
      const auto& w = lines_[next_].words;
      const int ln = lines_[next_].number;
      const std::string what = join(w, 1);    // "atoms", "bond types", ...
      const std::string bounds = join(w, 2);  // "xlo xhi", ...
      if (header_term_line(w, ln, what)) continue;
      if (what == "atoms") {
        d_.natoms = number<std::int64_t>(w, 0, ln, "the number of atoms");
      } else if (what == "atom types") {
        d_.ntypes = number<int>(w, 0, ln, "the number of atom types");
      } else if (w.size() == 4 &&
                 (bounds == "xlo xhi" || bounds == "ylo yhi" || bounds == "zlo zhi")) {
        const int a = bounds[0] - 'x';
        d_.box.lo[a] = number<double>(w, 0, ln, "the low bound");
        d_.box.hi[a] = number<double>(w, 1, ln, "the high bound");
        if (!(d_.box.hi[a] > d_.box.lo[a]))
          fail(ln, fmt::format("the box must have {} > {}", w[3], w[2]));
        have_box[a] = true;
      } else if (w.size() == 6 && join(w, 3) == "xy xz yz") {
        fail(ln, "tilted (triclinic) boxes are not supported; expected an orthogonal box");
      } else {
        fail(ln, fmt::format("expected a header line such as 'N atoms', 'N atom types' or "
                             "'lo hi xlo xhi', found '{}'",
                             join(w)));
      }
    }
    end_of_header_ = next_ < lines_.size() ? lines_[next_].number : 1;
    if (d_.natoms <= 0) fail(end_of_header_, "the header must give a positive 'N atoms'");
    if (d_.ntypes <= 0) fail(end_of_header_, "the header must give a positive 'N atom types'");
    for (int a = 0; a < 3; ++a)
      if (!have_box[a])
        fail(end_of_header_, fmt::format("the header must give '{0}lo {0}hi'", "xyz"[a]));
    for (int k = 0; k < 4; ++k)
      if (terms_[k] > 0 && term_types(k) == 0)
        fail(terms_line_[k], fmt::format("the header declares {} {} but no {} types (expected "
                                         "'N {} types' with N > 0)",
                                         terms_[k], kKinds[k].many, kKinds[k].one, kKinds[k].one));
  }

  /// The header lines of the topology ("N bonds", "N bond types", "N extra bond per atom", ...):
  /// true when `what` (the words after the number) is one of them, read.
  bool header_term_line(const std::vector<std::string>& w, int ln, const std::string& what) {
    for (int k = 0; k < 4; ++k) {
      const std::string one = kKinds[k].one;
      if (what == kKinds[k].many) {
        terms_[k] = count(w, ln);
        terms_line_[k] = ln;
        return true;
      }
      if (what == one + " types") {
        const auto n = count(w, ln);
        if (n > std::numeric_limits<int>::max())
          fail(ln, fmt::format("expected a number of {} types that fits an int, found {}", one, n));
        term_types(k) = static_cast<int>(n);
        return true;
      }
      if (what == "extra " + one + " per atom") {
        count(w, ln);  // a memory hint for LAMMPS, checked and ignored
        return true;
      }
    }
    if (what != "extra special per atom") return false;
    count(w, ln);
    return true;
  }

  /// The section whose keyword line is `head`, with all its rows.
  void section(const Line& head) {
    const int ln = head.number;
    if (!is_keyword(head))  // the header ends at a keyword: a row after a section's last
      fail(ln, fmt::format("expected a section keyword, found the row '{}': the {} section (line "
                           "{}) has {} rows, as the header declares",
                           join(head.words), previous_, previous_line_, previous_rows_));
    const std::string name = join(head.words);
    if (!is_section(name))
      fail(ln, fmt::format("expected a section ({}), found '{}'", kSections, name));
    if (const auto [it, inserted] = seen_.emplace(name, ln); !inserted)
      fail(ln, fmt::format("expected one {} section, found a second (the first is at line {})",
                           name, it->second));
    previous_ = name;
    previous_line_ = ln;
    auto& t = d_.topology;
    if (name == "Masses") {
      previous_rows_ = d_.ntypes;
      masses(ln);
    } else if (name == "Atoms") {
      previous_rows_ = d_.natoms;
      atoms(head);
    } else if (name == "Velocities") {
      previous_rows_ = d_.natoms;
      velocities(ln);
    } else if (name == "Bonds") {
      terms(0, t.bonds, ln);
    } else if (name == "Angles") {
      terms(1, t.angles, ln);
    } else if (name == "Dihedrals") {
      terms(2, t.dihedrals, ln);
    } else if (name == "Impropers") {
      terms(3, t.impropers, ln);
    } else if (name == "Pair Coeffs" || name == "PairIJ Coeffs") {
      const auto other = seen_.find(name == "Pair Coeffs" ? "PairIJ Coeffs" : "Pair Coeffs");
      if (other != seen_.end())
        fail(ln, fmt::format("expected Pair Coeffs or PairIJ Coeffs, found both ({} at line {})",
                             other->first, other->second));
      coeffs(t.pair_coeffs, head, "atom", d_.ntypes, name == "PairIJ Coeffs");
    } else {
      CoeffSection* sections[4] = {&t.bond_coeffs, &t.angle_coeffs, &t.dihedral_coeffs,
                                   &t.improper_coeffs};
      for (int k = 0; k < 4; ++k)
        if (name == kKinds[k].coeffs)
          coeffs(*sections[k], head, kKinds[k].one, term_types(k), false);
    }
  }

  /// The header's count of types of bonded kind k (bond types, angle types, ...).
  int& term_types(int k) {
    auto& t = d_.topology;
    return *std::array{&t.bond_types, &t.angle_types, &t.dihedral_types, &t.improper_types}[k];
  }

  static bool is_section(const std::string& name) {
    if (name == "Masses" || name == "Atoms" || name == "Velocities" || name == "Pair Coeffs" ||
        name == "PairIJ Coeffs")
      return true;
    for (const auto& k : kKinds)
      if (name == k.section || name == k.coeffs) return true;
    return false;
  }

  /// The next row of the section `section` that started at line `section_line`.
  const Line& row(int section_line, const std::string& section) {
    if (next_ >= lines_.size())
      fail(section_line, fmt::format("the {} section ends early: the file ends", section));
    const Line& l = lines_[next_];
    if (is_keyword(l))
      fail(l.number, fmt::format("the {} section (line {}) ends early: found '{}'", section,
                                 section_line, join(l.words)));
    ++next_;
    return l;
  }

  /// Masses: ntypes rows 'type mass', each type once.
  void masses(int ln) {
    d_.masses.assign(static_cast<std::size_t>(d_.ntypes), 0.0);
    Once once(d_.ntypes);
    for (int k = 0; k < d_.ntypes; ++k) {
      const Line& r = row(ln, "Masses");
      const int t = in_range(r.words, 0, r.number, "a type", 1, d_.ntypes);
      if (once.repeated(t)) fail(r.number, fmt::format("type {} appears twice", t));
      d_.masses[static_cast<std::size_t>(t - 1)] = number<double>(r.words, 1, r.number, "a mass");
    }
  }

  /// Velocities: natoms rows 'id vx vy vz', each id once.
  void velocities(int ln) {
    d_.velocities.assign(static_cast<std::size_t>(d_.natoms), {0, 0, 0});
    Once once(d_.natoms);
    for (std::int64_t k = 0; k < d_.natoms; ++k) {
      const Line& r = row(ln, "Velocities");
      const auto id = in_range<std::int64_t>(r.words, 0, r.number, "an atom id", 1, d_.natoms);
      if (once.repeated(id)) fail(r.number, fmt::format("atom id {} appears twice", id));
      for (int c = 0; c < 3; ++c)
        d_.velocities[static_cast<std::size_t>(id - 1)][c] =
            number<double>(r.words, 1 + c, r.number, "a velocity");
    }
  }

  /// The Atoms section (keyword line `head`): natoms rows of one style, each id once. The style
  /// is the keyword's comment, else the first row's word count says it.
  void atoms(const Line& head) {
    const char* const layout[2] = {"'id type x y z [ix iy iz]'",
                                   "'id molecule type q x y z [ix iy iz]'"};
    bool full = false;
    std::string why = "as the section's comment says";
    if (head.comment == "full") {
      full = true;
    } else if (head.comment.empty() && next_ < lines_.size() && !is_keyword(lines_[next_])) {
      const std::size_t n = lines_[next_].words.size();
      if (n != 5 && n != 8 && n != 7 && n != 10)
        fail(lines_[next_].number,
             fmt::format("expected 5 or 8 words (atom style atomic: {}) or 7 or 10 (atom style "
                         "full: {}), found {} words",
                         layout[0], layout[1], n));
      full = n == 7 || n == 10;
      why = fmt::format("as the first row has {} words", n);
    } else if (!head.comment.empty() && head.comment != "atomic") {
      fail(head.number,
           fmt::format("expected atom style atomic or full after 'Atoms #', found '{}'",
                       head.comment));
    }
    d_.style = full ? AtomStyle::full : AtomStyle::atomic;
    d_.charges = full;
    const std::size_t base = full ? 7 : 5;  // words without image counts
    const std::size_t at = full ? 4 : 2;    // the word of x
    Once once(d_.natoms);
    d_.atoms.reserve(static_cast<std::size_t>(d_.natoms));
    for (std::int64_t k = 0; k < d_.natoms; ++k) {
      const Line& r = row(head.number, "Atoms");
      const auto& w = r.words;
      const int l = r.number;
      if (w.size() != base && w.size() != base + 3)
        fail(l, fmt::format("expected {} or {} words ({}: atom style {}, {}), found {} words", base,
                            base + 3, layout[full], full ? "full" : "atomic", why, w.size()));
      DataAtom a;
      const auto id = in_range<std::int64_t>(w, 0, l, "an atom id", 1, d_.natoms);
      if (once.repeated(id)) fail(l, fmt::format("atom id {} appears twice", id));
      a.id = id - 1;
      a.type = in_range(w, full ? 2 : 1, l, "an atom type", 1, d_.ntypes) - 1;
      if (full) {
        a.molecule = number<std::int64_t>(w, 1, l, "a molecule id");
        if (a.molecule < 0)
          fail(l, fmt::format("expected a molecule id >= 0, found {}", a.molecule));
        a.charge = number<double>(w, 3, l, "a charge");
      }
      for (int c = 0; c < 3; ++c) a.x[c] = number<double>(w, at + c, l, "a coordinate");
      if (w.size() == base + 3)
        for (int c = 0; c < 3; ++c) a.image[c] = number<int>(w, base + c, l, "an image count");
      d_.atoms.push_back(a);
    }
  }

  /// A section of bonded terms of kind k (Bonds, ...): the header's count of rows 'id type atom1
  /// .. atomN', stored by id (out[id - 1]).
  template <int N>
  void terms(int k, std::vector<DataTerm<N>>& out, int ln) {
    const TermKind& kind = kKinds[k];
    const std::int64_t n = terms_[k];
    if (n == 0)
      fail(ln, fmt::format("found {} section but the header declares no {} (expected 'N {}' "
                           "with N > 0)",
                           with_article(kind.section), kind.many, kind.many));
    previous_rows_ = n;
    const int ntypes = term_types(k);
    std::string layout = "id type";
    for (int j = 1; j <= N; ++j) layout += fmt::format(" atom{}", j);
    out.assign(static_cast<std::size_t>(n), {});
    Once once(n);
    for (std::int64_t i = 0; i < n; ++i) {
      const Line& r = row(ln, kind.section);
      const auto& w = r.words;
      const int l = r.number;
      if (w.size() != N + 2)
        fail(l, fmt::format("expected '{}' ({} words), found {} words", layout, N + 2, w.size()));
      const auto id = in_range<std::int64_t>(w, 0, l, with_article(kind.one) + " id", 1, n);
      if (once.repeated(id)) fail(l, fmt::format("{} id {} appears twice", kind.one, id));
      DataTerm<N>& term = out[static_cast<std::size_t>(id - 1)];
      term.line = l;
      term.type = in_range(w, 1, l, with_article(kind.one) + " type", 1, ntypes) - 1;
      for (int j = 0; j < N; ++j) {
        // Atom ids are 1..natoms, each once: an id in that range is an atom of the file.
        const auto atom = number<std::int64_t>(w, 2 + j, l, "an atom id");
        if (atom < 1 || atom > d_.natoms)
          fail(l, fmt::format("{} {} names atom {}; the file has atoms 1..{}", kind.one, id, atom,
                              d_.natoms));
        for (int i2 = 0; i2 < j; ++i2)
          if (term.atoms[i2] == atom - 1)
            fail(l, fmt::format("{} {} names atom {} twice; expected {} distinct atoms", kind.one,
                                id, atom, N));
        term.atoms[j] = atom - 1;
      }
    }
  }

  /// A coefficient section (keyword line `head`) over `ntypes` types of `kind` ("atom", "bond",
  /// ...): one row 'type v...' per type (pair_ij: 't1 t2 v...' per t1 <= t2), stored in type
  /// order.
  void coeffs(CoeffSection& out, const Line& head, const std::string& kind, int ntypes,
              bool pair_ij) {
    const std::string name = join(head.words);
    if (ntypes == 0)
      fail(head.number, fmt::format("found {} section but the header declares no {} types "
                                    "(expected 'N {} types' with N > 0)",
                                    with_article(name), kind, kind));
    const auto nt = static_cast<std::int64_t>(ntypes);
    const std::int64_t n = pair_ij ? nt * (nt + 1) / 2 : nt;
    previous_rows_ = n;
    out.name = name;
    out.style = head.comment;
    out.line = head.number;
    out.rows.assign(static_cast<std::size_t>(n), {});
    Once once(n);
    const std::string type = with_article(kind) + " type";
    for (std::int64_t k = 0; k < n; ++k) {
      const Line& r = row(head.number, name);
      const auto& w = r.words;
      const int l = r.number;
      CoeffSection::Row entry;
      entry.line = l;
      entry.type = entry.type2 = in_range(w, 0, l, type, 1, ntypes) - 1;
      std::int64_t index = entry.type;
      if (pair_ij) {
        entry.type2 = in_range(w, 1, l, "a second atom type", 1, ntypes) - 1;
        if (entry.type2 < entry.type)
          fail(l, fmt::format("expected the types in order (t1 <= t2), found {} {}", entry.type + 1,
                              entry.type2 + 1));
        // Rows (0,0) .. (0,n-1), (1,1) .. (1,n-1), ...: row t1 starts after t1 rows that shrink.
        const std::int64_t i = entry.type, j = entry.type2;
        index = i * nt - i * (i - 1) / 2 + (j - i);
      }
      if (once.repeated(index + 1))
        fail(l, pair_ij ? fmt::format("types {} {} appear twice", entry.type + 1, entry.type2 + 1)
                        : fmt::format("type {} appears twice", entry.type + 1));
      for (std::size_t v = pair_ij ? 2 : 1; v < w.size(); ++v)
        entry.values.push_back(number<double>(w, v, l, "a coefficient"));
      out.rows[static_cast<std::size_t>(index)] = std::move(entry);
    }
  }

  /// What the whole file must have: an Atoms section, and a section for each declared count.
  void finish() const {
    if (!seen_.count("Atoms")) fail(end_of_header_, "the file has no Atoms section");
    for (int k = 0; k < 4; ++k)
      if (terms_[k] > 0 && !seen_.count(kKinds[k].section))
        fail(terms_line_[k], fmt::format("the header declares {} {} but the file has no {} section",
                                         terms_[k], kKinds[k].many, kKinds[k].section));
  }

  const std::string& path_;
  std::vector<Line> lines_;
  std::size_t next_ = 0;  ///< the next line to read
  AtomConfiguration d_;
  int end_of_header_ = 1;
  std::array<std::int64_t, 4> terms_{};  ///< the header's counts of bonds, angles, ...
  std::array<int, 4> terms_line_{};      ///< their lines
  std::map<std::string, int> seen_;      ///< the sections read, with their keywords' lines
  std::string previous_;                 ///< the last section read (for rows past its end)
  int previous_line_ = 0;
  std::int64_t previous_rows_ = 0;
};

}  // namespace

AtomConfiguration parse_lammps_data(const std::string& path, const std::string& text) {
  return Parser(path, text).parse();
}

std::string CoeffSection::where(const std::string& path, const Row* row) const {
  if (!dataset.empty())
    return row == nullptr ? fmt::format("{}: {}", path, dataset)
                          : fmt::format("{}: {}, row {}", path, dataset, row->type);
  return fmt::format("{}:{}", path, row == nullptr ? line : row->line);
}

}  // namespace stratus::io
