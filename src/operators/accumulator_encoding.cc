// The accumulator's state encodings (docs/state.md "File format"): the
// compact one that state files and spill stores hold, and the fixed layout of
// "SLS2" and "SLST" files, which is only read.
#include <cstring>

#include "common/endian.h"
#include "operators/aggregate.h"
#include "operators/aggregate_internal.h"
#include "operators/bytes.h"

namespace sluice::operators {
namespace {

using internal::CompareBest;
using internal::EntryBytes;
using internal::Get;
using internal::GetBytes;
using internal::kCountEntry;
using internal::kRegisters;
using internal::kTreeEntry;
using internal::Put;
using internal::PutBytes;

// The compact encoding's first byte: which fields follow (the others are 0
// or empty).
constexpr uint8_t kHasCount = 1, kHasExact = 2, kHasReal = 4, kOverflowFlag = 8, kHasBest = 16,
                  kHasExtra = 32, kAllFlags = 63;

// A varint of at most 64 bits (a tenth byte holds bit 63 alone).
bool GetVarint(std::string_view* in, uint64_t* v) {
  const auto* begin = reinterpret_cast<const uint8_t*>(in->data());
  const auto* p = begin;
  if (!ReadVarint(&p, begin + in->size(), v)) return false;
  if (p - begin == 10 && p[-1] > 1) return false;
  in->remove_prefix(static_cast<size_t>(p - begin));
  return true;
}

}  // namespace

void Accumulator::EncodeTo(std::string* out) const {
  uint64_t real_bits;
  std::memcpy(&real_bits, &real_, sizeof(real_bits));  // (-0.0 is kept)
  const uint8_t flags = (count_ != 0 ? kHasCount : 0) | (exact_ != 0 ? kHasExact : 0) |
                        (real_bits != 0 ? kHasReal : 0) | (overflow_ ? kOverflowFlag : 0) |
                        (!best_.empty() ? kHasBest : 0) | (extra_ ? kHasExtra : 0);
  out->push_back(static_cast<char>(flags));
  if (flags & kHasCount) AppendVarint(out, ZigZagEncode(count_));
  if (flags & kHasExact) Put<int128_t>(out, exact_);
  if (flags & kHasReal) Put<double>(out, real_);
  if (flags & kHasBest) PutBytes(out, best_);
  if (flags & kHasExtra) EncodeExtra(out);
}

void Accumulator::EncodeExtra(std::string* out) const {
  const Extra& x = *extra_;
  Put<uint32_t>(out, static_cast<uint32_t>(x.distinct.size()));
  for (const std::string& v : x.distinct) PutBytes(out, v);
  Put<uint32_t>(out, static_cast<uint32_t>(x.hashes.size()));
  for (uint64_t h : x.hashes) Put<uint64_t>(out, h);
  Put<uint32_t>(out, static_cast<uint32_t>(x.registers.size()));
  out->append(reinterpret_cast<const char*>(x.registers.data()), x.registers.size());
  if (!spec_->retracts) return;
  Put<int64_t>(out, x.wraps);
  // (min/max: their value counts, in the layout of count(DISTINCT)'s)
  auto put_counts = [out](const auto& counts) {
    Put<uint32_t>(out, static_cast<uint32_t>(counts.size()));
    for (const auto& [v, n] : counts) {
      PutBytes(out, v);
      Put<int64_t>(out, n);
    }
  };
  if (spec_->kind == AggKind::kMin || spec_->kind == AggKind::kMax) {
    put_counts(x.ordered);
  } else {
    put_counts(x.counts);
  }
}

Status Accumulator::DecodeFrom(std::string_view* in, AccEncoding encoding) {
  extra_.reset();
  bool has_extra = true;  // (the fixed layout always has the extra fields)
  if (encoding == AccEncoding::kFixed) {
    uint8_t overflow = 0;
    if (!Get(in, &count_) || !Get(in, &exact_) || !Get(in, &real_) || !Get(in, &overflow) ||
        !GetBytes(in, &best_)) {
      return Status::Corruption("accumulator of {}: truncated", spec_->text);
    }
    overflow_ = overflow != 0;
  } else {
    uint8_t flags = 0;
    if (!Get(in, &flags)) return Status::Corruption("accumulator of {}: truncated", spec_->text);
    if ((flags & ~kAllFlags) != 0) {
      return Status::Corruption("accumulator of {}: unknown flags {:#x}", spec_->text, flags);
    }
    count_ = 0;
    exact_ = 0;
    real_ = 0;
    best_.clear();
    uint64_t zigzag = 0;
    if (((flags & kHasCount) && !GetVarint(in, &zigzag)) ||
        ((flags & kHasExact) && !Get(in, &exact_)) || ((flags & kHasReal) && !Get(in, &real_)) ||
        ((flags & kHasBest) && !GetBytes(in, &best_))) {
      return Status::Corruption("accumulator of {}: truncated", spec_->text);
    }
    count_ = ZigZagDecode(zigzag);
    overflow_ = (flags & kOverflowFlag) != 0;
    has_extra = (flags & kHasExtra) != 0;
  }
  const bool min_max = spec_->kind == AggKind::kMin || spec_->kind == AggKind::kMax;
  if (min_max && (count_ < 0 || ((count_ != 0 || !best_.empty()) && !BestWidthOk(best_)))) {
    return Status::Corruption("accumulator of {}: {} values, a best value of {} bytes", spec_->text,
                              count_, best_.size());
  }
  int64_t counted = 0;  // (a retracting min/max: the values' counts, which add up to count_)
  if (has_extra) RETURN_IF_ERROR(DecodeExtra(in, &counted));
  if (spec_->retracts && min_max && counted != count_) {
    return Status::Corruption("accumulator of {}: value counts add up to {}, not its {} values",
                              spec_->text, counted, count_);
  }
  if (!spec_->retracts) return Status::OK();
  // The stored best stands while it is among the values and as good as
  // their best (a tie kept as it was chosen); else the values decide.
  if (min_max && extra_ && !extra_->ordered.empty()) {
    const auto& ordered = extra_->ordered;
    auto it = ordered.find(best_);
    const std::string& extreme =
        spec_->kind == AggKind::kMin ? ordered.begin()->first : ordered.rbegin()->first;
    if (it == ordered.end() || CompareBest(*spec_->output, best_, extreme) != 0) {
      BestFromOrdered();
    }
  } else if (min_max) {
    best_.clear();
  }
  return Status::OK();
}

Status Accumulator::DecodeExtra(std::string_view* in, int64_t* counted) {
  const bool min_max = spec_->kind == AggKind::kMin || spec_->kind == AggKind::kMax;
  uint32_t n = 0;
  if (!Get(in, &n)) return Status::Corruption("accumulator of {}: truncated", spec_->text);
  if (spec_->retracts && n > 0) {  // (a retracting count(DISTINCT) keeps value counts)
    return Status::Corruption("accumulator of {}: a distinct set where value counts belong",
                              spec_->text);
  }
  for (uint32_t i = 0; i < n; ++i) {
    std::string v;
    if (!GetBytes(in, &v)) return Status::Corruption("accumulator of {}: truncated", spec_->text);
    AddDistinct(v);
  }
  if (!Get(in, &n) || in->size() < size_t{n} * 8) {
    return Status::Corruption("accumulator of {}: truncated hashes", spec_->text);
  }
  if (n > 0) {
    std::vector<uint64_t>& hashes = extra().hashes;
    hashes.resize(n);
    for (uint32_t i = 0; i < n; ++i) Get(in, &hashes[i]);
  }
  if (!Get(in, &n) || (n != 0 && n != kRegisters) || in->size() < n) {
    return Status::Corruption("accumulator of {}: bad registers", spec_->text);
  }
  if (n > 0) extra().registers.assign(in->data(), in->data() + n);
  in->remove_prefix(n);
  if (!spec_->retracts) return Status::OK();
  int64_t wraps = 0;
  if (!Get(in, &wraps) || !Get(in, &n)) {
    return Status::Corruption("accumulator of {}: truncated counts", spec_->text);
  }
  if (wraps != 0) extra().wraps = wraps;
  for (uint32_t i = 0; i < n; ++i) {
    std::string v;
    int64_t count = 0;
    if (!GetBytes(in, &v) || !Get(in, &count) || count <= 0 || (min_max && !BestWidthOk(v))) {
      return Status::Corruption("accumulator of {}: bad value counts", spec_->text);
    }
    if (min_max) {
      // The values' counts add up to the accumulator's.
      if (__builtin_add_overflow(*counted, count, counted) || *counted > count_) {
        return Status::Corruption("accumulator of {}: value counts past its {} values", spec_->text,
                                  count_);
      }
      Extra& x = extra();
      auto [it, fresh] = x.ordered.try_emplace(std::move(v), count);
      if (fresh) x.set_bytes += EntryBytes(kTreeEntry, it->first);
    } else {
      Extra& x = extra();
      auto [it, fresh] = x.counts.try_emplace(std::move(v), count);
      if (fresh) x.set_bytes += EntryBytes(kCountEntry, it->first);
    }
  }
  return Status::OK();
}

}  // namespace sluice::operators
