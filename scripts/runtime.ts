/**
 * Node flags each service process runs with (npm start, the benchmark, container images).
 * - A 96 MB old generation: the services' live heaps stay small under load, but without a bound V8 lets the old
 *   generation grow far past them before it compacts (the dispatcher, batching hundreds of deliveries per
 *   transaction, went past its memory target).
 * - The young generation's semi-space: 16 MB for the request and conversion paths, 4 MB for the dispatcher. Nearly all
 *   of a request's or a batch's garbage dies young, and a scavenge costs about what survives it, not what it frees:
 *   with 16 MB instead of 4 MB semi-spaces the gateway, events and commissions services run a quarter as many
 *   scavenges per event and use measurably less CPU per event (`npm run bench:ab`), for some 20 MB more RSS each.
 *   The dispatcher keeps 4 MB: it peaks highest of the services while it batches deliveries, and its 150 MB target
 *   has no room for the difference.
 */
const OLD_SPACE_MB = 96;
const SEMI_SPACE_MB: Record<string, number> = { dispatcher: 4 };
const DEFAULT_SEMI_SPACE_MB = 16;

export function serviceNodeArgs(service: string): string[] {
  return [
    `--max-semi-space-size=${SEMI_SPACE_MB[service] ?? DEFAULT_SEMI_SPACE_MB}`,
    `--max-old-space-size=${OLD_SPACE_MB}`,
  ];
}
