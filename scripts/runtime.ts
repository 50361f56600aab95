/**
 * Node flags every service process runs with (npm start, the benchmark, container images).
 * - A 4 MB young-generation semi-space keeps a busy service's peak RSS near 120 MB instead of 150–200 MB: short-lived
 *   request garbage is collected more often, which the benchmark shows costs no measurable throughput.
 * - A 96 MB old generation: the services' live heaps stay near 20–30 MB under the benchmark's load, but V8 lets the
 *   old generation grow far past that before it compacts (the dispatcher reached 160–180 MB of RSS while batching
 *   hundreds of deliveries per transaction; with a bound it peaked near 100–120 MB at the same rate).
 */
export const SERVICE_NODE_ARGS = ['--max-semi-space-size=4', '--max-old-space-size=96'];
