#include "table_printer.h"

#include <algorithm>

#include "absl/strings/str_join.h"

namespace ikd::clients {

namespace {

void PrintPadded(std::ostream& out, const std::vector<std::string>& cells,
                 const std::vector<size_t>& widths) {
  std::string line;
  for (size_t k = 0; k < cells.size(); ++k) {
    line += cells[k];
    // Two spaces between columns; the last column is not padded (no trailing blanks).
    if (k + 1 < cells.size()) line.append(widths[k] - cells[k].size() + 2, ' ');
  }
  out << line << "\n";
}

}  // namespace

void TablePrinter::Print(std::ostream& out) const {
  if (style_ == kCsv) {
    out << absl::StrJoin(header_, ",") << "\n";
    for (const auto& row : rows_) out << absl::StrJoin(row, ",") << "\n";
    return;
  }
  std::vector<size_t> widths(header_.size(), 0);
  auto widen = [&widths](const std::vector<std::string>& cells) {
    for (size_t k = 0; k < cells.size() && k < widths.size(); ++k) {
      widths[k] = std::max(widths[k], cells[k].size());
    }
  };
  widen(header_);
  for (const auto& row : rows_) widen(row);
  PrintPadded(out, header_, widths);
  for (const auto& row : rows_) PrintPadded(out, row, widths);
}

void TablePrinter::PrintLine(std::ostream& out, const std::vector<std::string>& cells,
                             Style style, size_t width) {
  if (style == kCsv) {
    out << absl::StrJoin(cells, ",") << "\n";
    return;
  }
  std::vector<size_t> widths;
  for (const auto& cell : cells) widths.push_back(std::max(width, cell.size()));
  PrintPadded(out, cells, widths);
}

}  // namespace ikd::clients
