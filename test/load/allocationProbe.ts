/**
 * Counts the bytes a process allocates on its JavaScript heap over a window the benchmark chooses,
 * loaded into the server under test with `node --import ./test/load/allocationProbe.ts` (plain
 * `node` strips the types; it imports nothing of ours, so it loads into the floor as into the
 * service). The first SIGUSR2 opens the window, the second closes it and writes one JSON line to
 * ALLOCATION_PROBE_FILE:
 *
 *   { allocated_bytes, gcs, gc_pause_ms, gc_pause_us, heap_used_after_mib }
 *
 * Allocated bytes = the heap's growth over the window plus what every collection in it freed
 * (V8's GCProfiler reports the heap before and after each), so it counts garbage too, which is
 * what the request path costs the collector. It does not depend on the machine's load. The pauses
 * (`gc_pause_us`, V8's cost of each collection on the main thread) are what that garbage cost in time.
 */
import { writeFileSync } from "node:fs"
import { GCProfiler, getHeapStatistics } from "node:v8"

const file = process.env["ALLOCATION_PROBE_FILE"]

interface HeapAt {
  readonly heapStatistics: { readonly usedHeapSize: number }
}
interface GcRecord {
  readonly cost: number
  readonly beforeGC: HeapAt
  readonly afterGC: HeapAt
}

let window: { readonly profiler: GCProfiler; readonly usedAtStart: number } | undefined

if (file !== undefined) {
  process.on("SIGUSR2", () => {
    if (window === undefined) {
      const profiler = new GCProfiler()
      profiler.start()
      window = { profiler, usedAtStart: getHeapStatistics().used_heap_size }
      return
    }
    const usedAtEnd = getHeapStatistics().used_heap_size
    const gcs = (window.profiler.stop()?.statistics ?? []) as ReadonlyArray<GcRecord>
    const freed = gcs.reduce(
      (sum, gc) => sum + gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize,
      0
    )
    writeFileSync(
      file,
      JSON.stringify({
        allocated_bytes: usedAtEnd - window.usedAtStart + freed,
        gcs: gcs.length,
        gc_pause_ms: Math.round(gcs.reduce((sum, gc) => sum + gc.cost, 0) / 1000),
        gc_pause_us: Math.round(gcs.reduce((sum, gc) => sum + gc.cost, 0)),
        heap_used_after_mib: Math.round(usedAtEnd / 1048576)
      }) + "\n"
    )
    window = undefined
  })
}
