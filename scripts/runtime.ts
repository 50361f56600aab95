/**
 * Node flags each service process runs with (npm start, the benchmark, container images).
 * - A 96 MB old generation: the services' live heaps stay near 20–30 MB under the benchmark's load, but V8 lets the
 *   old generation grow far past that before it compacts (the dispatcher reached 160–180 MB of RSS while batching
 *   hundreds of deliveries per transaction; with a bound it peaked near 100–120 MB at the same rate).
 * - The young generation's semi-space: 16 MB for the request and conversion paths, 4 MB for the dispatcher. Nearly all
 *   of a request's or a batch's garbage dies young, and a scavenge costs about what survives it, not what it frees:
 *   with 16 MB instead of 4 MB semi-spaces the gateway, events and commissions services ran a quarter as many
 *   scavenges per event and used 10–16 % less CPU per event in the closed loop of `bench:ab` (docs/PERFORMANCE.md,
 *   2026-11-25 night), for about 22 MB more RSS each (110 MB). The dispatcher keeps 4 MB: it peaks near 115 MB with
 *   it while it batches deliveries, and its 150 MB target has no room for the difference.
 */
const OLD_SPACE_MB = 96;
const SEMI_SPACE_MB: Record<string, number> = { dispatcher: 4 };
const DEFAULT_SEMI_SPACE_MB = 16;

export function serviceNodeArgs(service: string): string[] {
  return [`--max-semi-space-size=${SEMI_SPACE_MB[service] ?? DEFAULT_SEMI_SPACE_MB}`, `--max-old-space-size=${OLD_SPACE_MB}`];
}
