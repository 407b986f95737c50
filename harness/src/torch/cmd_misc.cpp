// merge, compare, table, list: the result-file tools and the implementation list.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <utility>

#include "core/compare.hpp"
#include "core/lock.hpp"
#include "core/merge.hpp"
#include "core/text_table.hpp"
#include "torch/commands.hpp"
#include "torch/device_info.hpp"
#include "torch/implementation.hpp"

namespace sdtw::bench {

void register_merge(CLI::App& app) {
  auto* cmd = app.add_subcommand("merge", "Join result CSVs (shards or separate runs): one row per point key, "
                                          "the first file wins, rows in sweep order; JSON siblings are merged too");
  static std::vector<std::string> inputs;
  static std::string out;
  cmd->add_option("inputs", inputs, "Result CSVs")->required()->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", out, "Merged CSV (its .json sibling and runs log are written beside it)")->required();
  cmd->callback([] {
    // Inputs are never rewritten (they may belong to a sweep still writing them).
    for (size_t k = 0; k < inputs.size(); ++k)
      if (std::filesystem::exists(out) && std::filesystem::equivalent(inputs[k], out))
        throw std::invalid_argument("-o " + out + " is input " + std::to_string(k + 1) + " (" + inputs[k] +
                                    "): merge never rewrites its inputs; name a new file");
    const OutputLock lock(lock_path(out), out);
    std::vector<std::string> repairs;
    const size_t n = merge_files(inputs, out, &repairs).rows.size();
    for (const auto& r : repairs) std::cerr << "sdtw-bench: " << r << "\n";
    std::cout << "sdtw-bench: merged " << inputs.size() << " files into " << out << " (" << n << " rows)\n";
  });
}

void register_compare(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "compare", "Per point, time and memory of B relative to A: faster/slower when the [p10, p90] spreads do not "
                 "overlap, else same; memory more/less beyond --mem-tol");
  static std::string a, b;
  static double mem_tol = 0.02, margin = 0.0;
  static bool fail_on_slower = false;
  cmd->add_option("A", a, "Baseline results (.json or .csv)")->required()->check(CLI::ExistingFile);
  cmd->add_option("B", b, "New results (.json or .csv)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--mem-tol", mem_tol, "Relative memory difference counted as same (default 0.02)")
      ->check(finite_non_negative());
  cmd->add_option("--margin", margin, "Extra relative gap required between the spreads (default 0)")
      ->check(finite_non_negative());
  cmd->add_flag("--fail-on-slower", fail_on_slower,
                "Exit 1 when any point is slower or uses more memory, or when no point is in both files");
  cmd->callback([] {
    const Table ta = load_results(a), tb = load_results(b);
    // A gate that passes on a file without rows would pass on a sweep that ran nothing.
    for (const auto& [table, name] : {std::pair{&ta, &a}, std::pair{&tb, &b}})
      if (table->rows.empty()) throw std::runtime_error(*name + ": no result rows to compare");
    const auto rep = compare_tables(ta, tb, mem_tol, margin);
    std::cout << format_report(rep, a, b);
    if (rep.entries.empty()) std::cerr << "sdtw-bench: no point is in both " << a << " and " << b << "\n";
    if (fail_on_slower && (rep.slower > 0 || rep.more_memory > 0 || rep.entries.empty())) exit_status() = 1;
  });
}

void register_table(CLI::App& app) {
  auto* cmd = app.add_subcommand("table", "Print a results file (.csv or .json) as a readable table");
  static std::string file;
  cmd->add_option("file", file, "Results file")->required()->check(CLI::ExistingFile);
  cmd->callback([] { std::cout << format_results_summary(load_results(file)); });
}

void register_list(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List the implementations, whether they are built, and the device");
  cmd->callback([] {
    Table t;
    t.header = {"impl", "built", "description"};
    for (const auto& i : registry()) t.rows.push_back({i->name(), i->built() ? "yes" : "no", i->description()});
    std::cout << format_text_table(t);
    const auto g = gpu_name();
    std::cout << "GPU: " << (g.empty() ? std::string("none (results go to results/cpu)") : g + " (results/" + device_slug() + ")")
              << "\n";
  });
}

}  // namespace sdtw::bench
