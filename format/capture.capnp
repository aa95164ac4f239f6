@0xa12701d1c598f535;

# The capture file's messages. Each frame of a capture holds exactly one of
# the root structs below; the frame header's type code says which (see
# format/include/gpucap/format/frame.h). Fields are only ever appended, never
# renumbered, so an older reader reads a newer minor version and a newer
# reader reads every older file.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("gpucap::schema");

struct KindSize {
  kind @0 :UInt32;
  size @1 :UInt32;
}

struct KindCount {
  kind @0 :UInt32;
  count @1 :UInt64;
}

struct KeyValue {
  key @0 :Text;
  value @1 :Text;
}

# Frame type 1: once, first frame of the file.
struct Session {
  formatMajor @0 :UInt16;
  formatMinor @1 :UInt16;
  toolVersion @2 :Text;
  host @3 :Text;
  pid @4 :UInt32;
  ppid @5 :UInt32;
  commandLine @6 :List(Text);
  startRealtimeNs @7 :Int64;
  startMonotonicNs @8 :Int64;
  startCuptiNs @9 :UInt64;
  cuptiRuntimeVersion @10 :UInt32;
  cuptiHeaderVersion @11 :UInt32;
  cudaDriverVersion @12 :Int32;
  cudaRuntimeVersion @13 :Int32;
  enabledKinds @14 :List(UInt32);
  recordSizes @15 :List(KindSize);
  rank @16 :Int32 = -1;
  localRank @17 :Int32 = -1;
  worldSize @18 :Int32 = -1;
  options @19 :List(KeyValue);
  processName @20 :Text;
}

struct Device {
  id @0 :UInt32;
  uuid @1 :Data;
  name @2 :Text;
  totalGlobalMem @3 :UInt64;
  computeMajor @4 :Int32;
  computeMinor @5 :Int32;
  maxThreadsPerBlock @6 :Int32;
  maxThreadsPerMultiprocessor @7 :Int32;
  regsPerBlock @8 :Int32;
  regsPerMultiprocessor @9 :Int32;
  warpSize @10 :Int32;
  sharedMemPerBlock @11 :Int32;
  sharedMemPerMultiprocessor @12 :Int32;
  sharedMemPerBlockOptin @13 :Int32;
  numSms @14 :Int32;
  l2CacheSize @15 :Int32;
  clockRateKhz @16 :Int32;
  memoryClockRateKhz @17 :Int32;
  memoryBusWidth @18 :Int32;
  pciBusId @19 :Text;
}

# Frame type 2.
struct Devices {
  devices @0 :List(Device);
}

enum ClockKind {
  start @0;
  periodic @1;
  end @2;
}

struct ClockSample {
  kind @0 :ClockKind;
  cuptiNs @1 :UInt64;
  monotonicNs @2 :Int64;
  realtimeNs @3 :Int64;
}

# Frame type 3.
struct Clocks {
  samples @0 :List(ClockSample);
}

enum Codec {
  none @0;
  lz4Block @1;
}

# Frame type 4: one CUPTI activity buffer, as CUPTI delivered it.
struct ActivityChunk {
  codec @0 :Codec;
  rawSize @1 :UInt32;         # valid bytes of the CUPTI buffer
  rawChecksum @2 :UInt32;     # CRC32C of the raw bytes, checked after decompression
  payload @3 :Data;           # raw bytes, compressed by `codec`
  recordCount @4 :UInt32;
  kindCounts @5 :List(KindCount);
  minStartNs @6 :UInt64;      # smallest start timestamp of a record that has one (0: none)
  maxStartNs @7 :UInt64;
  maxEndNs @8 :UInt64;
  contextId @9 :UInt32;
  streamId @10 :UInt32;
  recordSizes @11 :List(KindSize);  # bytes from one record of a kind to the next, as walked
}

struct StringDef {
  pointer @0 :UInt64;
  text @1 :Text;
}

# Frame type 5: (CUPTI string pointer -> text), applying to chunks after it.
struct Strings {
  defs @0 :List(StringDef);
}

enum RangeKind {
  push @0;
  pop @1;
  start @2;
  end @3;
  mark @4;
  nameThread @5;
  nameDomain @6;
  nameCategory @7;
  payloadSchema @8;   # an NVTX payload schema registered in `domain`, id = schema id
  payloadEnum @9;     # an NVTX payload enum registered in `domain`, id = schema id
}

enum RangeSource {
  nvtx @0;
  api @1;
}

struct RangeEvent {
  kind @0 :RangeKind;
  source @1 :RangeSource;
  timestampNs @2 :UInt64;
  osTid @3 :UInt32;
  id @4 :UInt64;              # start/end range id; unused for push/pop
  name @5 :Text;
  domain @6 :UInt64;          # 0: the default domain
  category @7 :UInt32;
  color @8 :UInt32;
  payload :union {
    none @9 :Void;
    uint64 @10 :UInt64;
    int64 @11 :Int64;
    double @12 :Float64;
  }
  # NVTX extended payloads (NVTX_PAYLOAD_TYPE_EXT, nvtxRangePushPayload,
  # nvtxRangePopPayload...): the bytes as the program passed them, to be read
  # with the schema of the same id and domain. Pointers inside are not followed.
  extPayloads @13 :List(ExtPayload);
  schema @14 :PayloadSchema;  # payloadSchema and payloadEnum events
}

struct ExtPayload {
  schemaId @0 :UInt64;
  data @1 :Data;
  truncated @2 :Bool;         # longer than the recorder keeps; `data` holds the head
}

# nvtxPayloadSchemaEntry_t, the pointers resolved.
struct PayloadSchemaEntry {
  flags @0 :UInt64;
  type @1 :UInt64;            # NVTX_PAYLOAD_ENTRY_TYPE_* or another schema's id
  name @2 :Text;
  description @3 :Text;
  arrayOrUnionDetail @4 :UInt64;
  offset @5 :UInt64;
}

struct PayloadEnumEntry {
  name @0 :Text;
  value @1 :UInt64;
  isFlag @2 :Bool;
}

# nvtxPayloadSchemaAttr_t or nvtxPayloadEnumAttr_t, as registered. Fields a
# registration left out of its field mask read as 0.
struct PayloadSchema {
  fieldMask @0 :UInt64;
  schemaType @1 :UInt64;      # NVTX_PAYLOAD_SCHEMA_TYPE_*
  flags @2 :UInt64;
  staticSize @3 :UInt64;      # schemas: payloadStaticSize; enums: sizeOfEnum
  packAlign @4 :UInt64;
  entries @5 :List(PayloadSchemaEntry);
  enumEntries @6 :List(PayloadEnumEntry);
}

# Frame type 6.
struct Ranges {
  events @0 :List(RangeEvent);
}

enum GraphEventKind {
  graphCreated @0;
  graphCloned @1;
  graphDestroyed @2;
  nodeCreated @3;
  nodeCloned @4;
  nodeDestroyed @5;
  dependencyAdded @6;
  dependencyRemoved @7;
  execCreated @8;
  execDestroyed @9;
  execUpdated @10;
  hostNodeRun @11;                # one run of a host node's function (recorder's trampoline)
  captureBegan @12;               # a stream capture began: captureStream is its origin stream
  captureEnded @13;               # that capture ended (graphId: the graph it made)
}

struct GraphEvent {
  kind @0 :GraphEventKind;
  timestampNs @1 :UInt64;
  osTid @2 :UInt32;
  graphId @3 :UInt32;
  nodeId @4 :UInt64;
  nodeType @5 :UInt32;
  originalGraphId @6 :UInt32;     # cloned: the graph or node this one was cloned from
  originalNodeId @7 :UInt64;
  peerNodeId @8 :UInt64;          # dependency: from nodeId to peerNodeId
  execId @9 :UInt32;
  functionName @10 :Text;         # kernel nodes: kernel; host nodes: host function symbol
  functionAddress @11 :UInt64;
  eventHandle @12 :UInt64;        # event record / wait nodes
  contextId @13 :UInt32;
  deviceId @14 :UInt32;
  endNs @15 :UInt64;              # hostNodeRun: the function's return (timestampNs: its call)
  # nodeCreated under stream capture: CUPTI's id (cuptiGetStreamIdEx, the id
  # space of activity records' streamId) of the stream the program passed to
  # the stream-ordered call that created the node; captureBegan/Ended: the
  # capture's origin stream. 0xffffffff: none (captures recorded before this
  # field, nodes added explicitly, instantiation's copies).
  captureStream @16 :UInt32 = 0xffffffff;
  captureStreamHandle @17 :UInt64;  # the CUstream value the program passed
  apiCorrelationId @18 :UInt32;     # nodeCreated: correlation id of the call that created it
  captureId @19 :UInt64;            # captureBegan/Ended: cuStreamGetCaptureInfo's id
  captureMode @20 :UInt32;          # captureBegan: CUstreamCaptureMode
}

# Frame type 7.
struct Graphs {
  events @0 :List(GraphEvent);
}

enum WindowMarkKind {
  open @0;
  close @1;
  instant @2;
}

struct WindowMark {
  kind @0 :WindowMarkKind;
  timestampNs @1 :UInt64;
  osTid @2 :UInt32;
  id @3 :UInt64;
  label @4 :Text;
}

# Frame type 8.
struct Windows {
  marks @0 :List(WindowMark);
}

struct ThreadInfo {
  pid @0 :UInt32;
  cuptiThreadId @1 :UInt64;
  osTid @2 :UInt32;
  name @3 :Text;
}

# Frame type 9.
struct Threads {
  threads @0 :List(ThreadInfo);
}

# A stream the program created, with what CUPTI's activity records do not
# carry (issue 17 item 4): its priority and flags. Recorded at the stream's
# creation (CUPTI's STREAM_CREATED resource callback) while the recorder is
# subscribed; the default streams are never created and have priority 0.
struct StreamInfo {
  device @0 :UInt32;
  contextId @1 :UInt32;   # as in activity records
  streamId @2 :UInt32;    # CUPTI's id, as in activity records
  priority @3 :Int32;     # cuStreamGetPriority: lower numbers run first
  flags @4 :UInt32;       # cuStreamGetFlags: 1 = CU_STREAM_NON_BLOCKING
  timestampNs @5 :UInt64; # when it was created, CUPTI's clock
  osTid @6 :UInt32;       # the thread that created it
}

# Frame type 14.
struct Streams {
  streams @0 :List(StreamInfo);
}

enum MetadataKey {
  global @0;
  externalId @1;
  correlationId @2;
  graphNode @3;
  range @4;
}

struct MetadataBlob {
  keyKind @0 :MetadataKey;
  key @1 :UInt64;
  name @2 :Text;
  contentType @3 :Text;
  data @4 :Data;
  timestampNs @5 :UInt64;
  osTid @6 :UInt32;
}

# Frame type 10.
struct Metadata {
  blobs @0 :List(MetadataBlob);
}

struct NamedCount {
  name @0 :Text;
  value @1 :UInt64;
}

# Frame type 11: a snapshot of the recorder's counters. Later snapshots
# supersede earlier ones.
struct Stats {
  timestampNs @0 :UInt64;
  cuptiDroppedRecords @1 :UInt64;
  buffersDroppedPoolEmpty @2 :UInt64;
  buffersDroppedQueueFull @3 :UInt64;
  bytesDropped @4 :UInt64;
  messagesDropped @5 :UInt64;
  queueHighWater @6 :UInt64;
  framesWritten @7 :UInt64;
  bytesWritten @8 :UInt64;
  writerError @9 :Text;
  extra @10 :List(NamedCount);
}

struct CounterDef {
  id @0 :UInt32;
  name @1 :Text;
  unit @2 :Text;
  deviceId @3 :UInt32;
}

struct CounterSample {
  id @0 :UInt32;
  timestampNs @1 :UInt64;
  value @2 :Float64;
}

# Frame type 13: GPU counters (power, clocks, PM sampling).
struct Counters {
  defs @0 :List(CounterDef);
  samples @1 :List(CounterSample);
}

struct IndexEntry {
  offset @0 :UInt64;
  type @1 :UInt16;
  length @2 :UInt32;
  minTimestampNs @3 :UInt64;
  maxTimestampNs @4 :UInt64;
}

# Frame type 12: last frame of a cleanly closed file, found through the
# file footer.
struct Trailer {
  cleanShutdown @0 :Bool;
  endCuptiNs @1 :UInt64;
  frames @2 :UInt64;
  activityRecords @3 :UInt64;
  recordsPerKind @4 :List(KindCount);
  stats @5 :Stats;
  index @6 :List(IndexEntry);
  stopReason @7 :Text;
  # Set in a flight-recorder dump (frame_ring.h): what asked for it
  # ("signal", "api: <why>", "exit", ...). Empty in a whole recording.
  trigger @8 :Text;
}
