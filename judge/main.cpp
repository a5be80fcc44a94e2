// solgemm-judge: checks and times an implementation against a baseline on the shapes of judge-spec.md, and
// writes the report (stdout tables, JSON, markdown, SVG). Progress goes to stderr.
// Exit code: 0 every check passed; 1 a correctness check failed (each failure printed with its check, row, error
// size and seed); 2 bad input (one line on stderr) or a runtime error.
#include <exception>
#include <iostream>

#include "cli.hpp"
#include "device.hpp"
#include "report.hpp"
#include "run.hpp"
#include "solgemm/solgemm.hpp"

int main(int argc, char** argv) {
  using namespace solgemm::judge;
  try {
    Options opt;
    if (const auto rc = parse_cli(argc, argv, opt, std::cout, std::cerr)) return *rc;
    const RunResult r = run_judge(opt, std::cerr);
    print_tables(r, std::cout);
    std::cout.flush();
    write_outputs(r, opt);
    for (const std::string& f : r.failures) std::cerr << "solgemm-judge: FAILED: " << f << "\n";
    return r.ok() ? 0 : 1;
  } catch (const solgemm::Error& e) {
    std::cerr << "solgemm-judge: " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "solgemm-judge: " << e.what() << "\n";
  }
  return 2;
}
