// Rows of text out as CSV or as an aligned table, for ikctl's --format=csv|table.
//
//   TablePrinter table({"name", "version"}, TablePrinter::kTable);
//   table.AddRow({"arms/demo", "3"});
//   table.Print(std::cout);
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace ikd::clients {

class TablePrinter {
 public:
  enum Style { kCsv, kTable };

  TablePrinter(std::vector<std::string> header, Style style)
      : header_(std::move(header)), style_(style) {}

  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  // Header first, then the rows; table columns padded to their widest cell.
  void Print(std::ostream& out) const;

  // One line at a time, for streams whose rows are not known up front: table columns get a
  // fixed `width` instead of the widest cell.
  static void PrintLine(std::ostream& out, const std::vector<std::string>& cells, Style style,
                        size_t width = 12);

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  Style style_;
};

}  // namespace ikd::clients
