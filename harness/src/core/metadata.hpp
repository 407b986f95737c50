#pragma once
// Provenance recorded with every result file: build, source tree, host, config.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sdtw::bench {

// 64-bit FNV-1a of the bytes, as 16 lowercase hex digits (the config hash in the JSON metadata).
std::string fnv1a64_hex(const std::string& bytes);

// Short directory name for a device: "NVIDIA H100 80GB HBM3" -> "h100", "" or "cpu" -> "cpu".
std::string gpu_slug(const std::string& device_name);

// Runs a shell command and returns its stdout without the trailing newline; nullopt on failure.
std::optional<std::string> capture(const std::string& command);

// git commit and dirty flag of the source tree (results/ excluded), "unknown" outside a repository.
struct GitInfo {
  std::string commit = "unknown";
  std::string dirty = "unknown";  // "true", "false" or "unknown"
};
GitInfo git_info(const std::string& source_dir);

std::string utc_now_iso8601();

// The command line as run (the sidecar's "command"), recorded once by main().
void record_command_line(int argc, char** argv);
const std::vector<std::string>& command_line();

// Compiler, build type, host name and CPU model; the caller adds device and library versions.
nlohmann::json host_metadata();

}  // namespace sdtw::bench
