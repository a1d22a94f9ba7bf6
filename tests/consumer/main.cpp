// Uses the installed Stratus: builds a context, checks a deck from a string against the
// registered solvers' schema and prints one resolved value.
#include <stratus/core/context.hpp>
#include <stratus/io/deck.hpp>
#include <stratus/solvers/solver.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  stratus::Context ctx(argc, argv);
  return ctx.run_guarded([&] {
    stratus::SolverRegistry registry;
    stratus::register_builtin_solvers(registry);
    const std::string text =
        "[run]\nsolver = \"heat\"\nsteps = 3\n[heat]\ncells = [4, 4, 4]\ndiffusivity = 0.5\n";
    const auto deck = stratus::io::load_deck("consumer.toml", text, std::vector<std::string>{},
                                             stratus::common_schema(registry),
                                             [&](const std::string& solver, stratus::Schema& s) {
                                               registry.find(solver)->declare_sections(s);
                                             });
    std::printf("consumer: heat.dt_fraction = %g\n", deck.real("heat.dt_fraction"));
    return deck.real("heat.dt_fraction") == 0.5 ? 0 : 1;
  });
}
