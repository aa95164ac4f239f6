#include "slice_pieces.h"

#include <cstring>
#include <string_view>
#include <system_error>

namespace gpucap::builder {

// A run of slices copied out of the join: every string, argument and flow
// end in storage of the piece's own, since what the join hands over lives
// only as long as its AddSlice call.
struct SlicePieces::Piece {
  struct Stored {
    Slice slice;  // name points into the arena; args and flows are offsets below
    uint32_t args = 0, flows_out = 0, flows_in = 0;
  };
  std::vector<Stored> slices;
  std::vector<Arg> args;
  std::vector<FlowEnd> flows;
  // Blocks of the piece's bytes, kept when the piece is reused: a piece's
  // storage allocated afresh each time faulted in ~10 MB of new pages per
  // 16k slices, which doubled the CPU time of a build.
  std::vector<std::pair<std::unique_ptr<char[]>, size_t>> arena;  // (block, size)
  size_t arena_block = 0, arena_used = 0;
  std::unique_ptr<TraceSink> renderer;
  RenderedPiece out;
  Status status = Status::Ok();
  bool done = false;

  static constexpr size_t kArenaBlock = 256 << 10;
  char* Allocate(size_t n) {
    n = (n + 7) & ~size_t{7};
    while (arena_block < arena.size() && arena_used + n > arena[arena_block].second) {
      arena_block++;
      arena_used = 0;
    }
    if (arena_block == arena.size()) {
      size_t size = std::max(kArenaBlock, n);
      arena.emplace_back(std::unique_ptr<char[]>(new char[size]), size);
      arena_used = 0;
    }
    char* p = arena[arena_block].first.get() + arena_used;
    arena_used += n;
    return p;
  }
  // Empties the piece for its next run, keeping its storage.
  void Reset() {
    slices.clear();
    args.clear();
    flows.clear();
    arena_block = 0;
    arena_used = 0;
    out.blocks.clear();
    status = Status::Ok();
    done = false;
  }
  std::string_view Copy(std::string_view s) {
    if (s.empty()) return {};
    char* p = Allocate(s.size());
    std::memcpy(p, s.data(), s.size());
    return {p, s.size()};
  }
  Arg CopyArg(const Arg& a) {
    // gpucap's own keys are literals (trace_model.h): only a foreign one
    // (from the recorded process) needs a copy.
    std::string_view key = a.foreign_key ? Copy(a.key) : a.key;
    Arg c;
    switch (a.type) {
      case Arg::Type::kInt: c = Arg::Int(key, a.i()); break;
      case Arg::Type::kUint: c = Arg::Uint(key, a.u()); break;
      case Arg::Type::kDouble: c = Arg::Double(key, a.d()); break;
      case Arg::Type::kFloat6: c = Arg::Float6(key, a.d()); break;
      case Arg::Type::kString: c = Arg::String(key, Copy(a.s())); break;
      case Arg::Type::kInts: {
        std::span<const int64_t> v = a.ints();
        auto* p = reinterpret_cast<int64_t*>(Allocate(v.size_bytes() + 1));
        std::copy(v.begin(), v.end(), p);
        c = Arg::Ints(key, {p, v.size()});
        break;
      }
      case Arg::Type::kStrings: {
        std::span<const std::string_view> v = a.strings();
        auto* p = reinterpret_cast<std::string_view*>(Allocate(v.size_bytes() + 1));
        for (size_t i = 0; i < v.size(); ++i) new (p + i) std::string_view(Copy(v[i]));
        c = Arg::Strings(key, {p, v.size()});
        break;
      }
    }
    return a.foreign_key ? c.Foreign() : c;
  }
  void Add(const Slice& s) {
    Stored st;
    st.slice = s;
    st.slice.name = Copy(s.name);
    st.args = static_cast<uint32_t>(s.args.size());
    for (const Arg& a : s.args) args.push_back(CopyArg(a));
    st.flows_out = static_cast<uint32_t>(s.flows_out.size());
    st.flows_in = static_cast<uint32_t>(s.flows_in.size());
    flows.insert(flows.end(), s.flows_out.begin(), s.flows_out.end());
    flows.insert(flows.end(), s.flows_in.begin(), s.flows_in.end());
    slices.push_back(st);
  }
};

SlicePieces::SlicePieces(TraceSink* sink, size_t slices, int helpers) : sink_(sink) {
  if (slices <= kSlicesPerPiece) return;
  current_ = std::make_unique<Piece>();
  current_->renderer = sink_->NewPiece(&current_->out);
  if (current_->renderer == nullptr) {
    current_.reset();
    return;
  }
  cut_ = true;
  try {
    for (int i = 0; i < helpers; ++i) helpers_.emplace_back([this] { Work(); });
  } catch (const std::system_error&) {
    // Fewer helpers; with none, pieces are rendered on the caller's thread.
  }
  max_in_flight_ = helpers_.size() + 2;
}

SlicePieces::~SlicePieces() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_.notify_all();
  for (std::thread& t : helpers_) t.join();
}

Status SlicePieces::Add(const Slice& s) {
  if (!cut_) return sink_->AddSlice(s);
  current_->Add(s);
  if (current_->slices.size() < kSlicesPerPiece) return Status::Ok();
  return Submit();
}

void SlicePieces::Render(Piece* p) {
  size_t arg = 0, flow = 0;
  for (Piece::Stored& st : p->slices) {
    Slice& s = st.slice;
    s.args = {p->args.data() + arg, st.args};
    arg += st.args;
    s.flows_out = {p->flows.data() + flow, st.flows_out};
    flow += st.flows_out;
    s.flows_in = {p->flows.data() + flow, st.flows_in};
    flow += st.flows_in;
    if (p->status.ok()) p->status = p->renderer->AddSlice(s);
  }
  if (p->status.ok()) p->status = p->renderer->End();
  p->renderer.reset();
}

void SlicePieces::Work() {
  while (true) {
    Piece* p;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;
      p = queue_.front();
      queue_.pop_front();
    }
    Render(p);
    {
      std::lock_guard<std::mutex> lock(mu_);
      p->done = true;
    }
    done_.notify_all();
  }
}

Status SlicePieces::Submit() {
  std::unique_ptr<Piece> p = std::move(current_);
  Piece* raw = p.get();
  in_flight_.push_back(std::move(p));
  if (helpers_.empty()) {
    Render(raw);
    raw->done = true;
  } else {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(raw);
    }
    work_.notify_one();
  }
  while (in_flight_.size() >= max_in_flight_) GPUCAP_RETURN_IF_ERROR(EmitOldest());
  return NewCurrent();
}

Status SlicePieces::NewCurrent() {
  if (spare_.empty()) {
    current_ = std::make_unique<Piece>();
  } else {
    current_ = std::move(spare_.back());
    spare_.pop_back();
    current_->Reset();
  }
  current_->renderer = sink_->NewPiece(&current_->out);
  if (current_->renderer == nullptr) return Status::Internal("the renderer stopped giving pieces");
  return Status::Ok();
}

Status SlicePieces::EmitOldest() {
  Piece* p = in_flight_.front().get();
  {
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return p->done; });
  }
  Status st = p->status.ok() ? sink_->AddPiece(&p->out) : p->status;
  spare_.push_back(std::move(in_flight_.front()));
  in_flight_.pop_front();
  return st;
}

Status SlicePieces::Finish() {
  if (!cut_) return Status::Ok();
  if (!current_->slices.empty()) {
    GPUCAP_RETURN_IF_ERROR(Submit());
  }
  current_.reset();
  while (!in_flight_.empty()) GPUCAP_RETURN_IF_ERROR(EmitOldest());
  return Status::Ok();
}

}  // namespace gpucap::builder
