// A sparse symmetric system refilled with the same entries in the same order at every
// iteration of an optimizer (a fixed pattern): the first fill collects triplets, finds each
// one's slot among the stored values and analyzes the pattern once; later fills add straight
// into the slots, and each fill is factored by a simplicial LDL^T.
//
//   ikd::planning::FixedPatternLdlt system;
//   system.StartFill();  system.Add(i, j, value);  ...
//   if (system.Factor(size)) x = system.Solve(b);
#pragma once

#include <algorithm>
#include <vector>

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>

namespace ikd::planning {

class FixedPatternLdlt {
 public:
  void StartFill() {
    next_slot_ = 0;
    if (slots_.empty()) return;  // the first fill: its triplets are collected
    std::fill(matrix_.valuePtr(), matrix_.valuePtr() + matrix_.nonZeros(), 0.0);
  }
  // Adds `value` at (i, j); the entries of every fill must come in the first fill's order.
  void Add(int i, int j, double value) {
    if (slots_.empty()) {
      triplets_.emplace_back(i, j, value);
    } else {
      matrix_.valuePtr()[slots_[next_slot_++]] += value;
    }
  }
  // Ends the fill of a size x size system and factors it; false when it cannot be factored.
  bool Factor(int size) {
    if (slots_.empty()) {
      matrix_.resize(size, size);
      matrix_.setFromTriplets(triplets_.begin(), triplets_.end());
      for (const Eigen::Triplet<double>& t : triplets_) {
        slots_.push_back(
            static_cast<int>(&matrix_.coeffRef(t.row(), t.col()) - matrix_.valuePtr()));
      }
      triplets_.clear();
      ldlt_.analyzePattern(matrix_);
    }
    ldlt_.factorize(matrix_);
    return ldlt_.info() == Eigen::Success;
  }
  // The solution for a right-hand side of the last factored fill.
  Eigen::VectorXd Solve(const Eigen::VectorXd& rhs) const { return ldlt_.solve(rhs); }

 private:
  Eigen::SparseMatrix<double> matrix_;
  std::vector<Eigen::Triplet<double>> triplets_;  // of the first fill
  std::vector<int> slots_;                        // of every Add, in order
  size_t next_slot_ = 0;
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt_;
};

}  // namespace ikd::planning
