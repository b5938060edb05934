// Numbers as text that loses nothing: the shortest decimal form that reads back to the same
// double ("1785780", "10.5", "0.1"), never a rounded "1.78578e+06". Used wherever a number is
// written for another program to read (CSV, SWF, JSON-like text).
#pragma once

#include <string>

namespace trellis {

std::string exact_number(double value);

}  // namespace trellis
