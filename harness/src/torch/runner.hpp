#pragma once
// One point end to end: support check, inputs, timing, verification, disposition. Never throws
// for a failing point; the failure is the row's disposition and message.
#include <string>

#include "core/config.hpp"
#include "core/row.hpp"

namespace sdtw::bench {

Result run_point(const Point& p, const Settings& s, const std::string& sweep_name);

}  // namespace sdtw::bench
