/**
 * What the capacity model (scripts/capacity.ts) adds to the bench's figures: which rows of docs/PERFORMANCE.md it
 * reads, the assumptions of a production deployment, and the storage per row measured once (the bench drops its
 * database, so it cannot report sizes). The CPU figures themselves are read from docs/PERFORMANCE.md, never copied
 * here, so a new bench run moves the projection with it.
 */

/** A figure of docs/PERFORMANCE.md: the table whose first header cell starts with `table`, its row, its column. */
export interface FigureRef {
  table: string;
  row: string;
  column: string;
}

const EVENTS_CPU = 'CPU µs per event';
const EVENTS_PG = 'Postgres CPU µs per event';
const WEBHOOK_CPU = 'CPU µs per delivery or event';
const WEBHOOK_PG = 'Postgres CPU µs per delivery or event';
const AFFILIATES_CPU = 'CPU µs per response';

// A conversion event at a steady rate (open loop): what production sees, batches not full. The closed loop's row
// (batches full) is cheaper; the model takes the dearer one.
const EVENT_ROW = 'gateway POST /api/v1/events at 1000/s, open loop';
const DELIVERY_ROW = 'dispatcher → 16 endpoints (16 merchants)';
const LIST_ROW = 'gateway GET /api/v1/affiliates?limit=25';

/** The operations of the model, each with its CPU per operation in each process and in Postgres. */
export const OPERATIONS = {
  conversion: {
    label: 'conversion event, event to commission (steady rate)',
    services: {
      gateway: { table: EVENTS_CPU, row: EVENT_ROW, column: 'gateway' },
      events: { table: EVENTS_CPU, row: EVENT_ROW, column: 'events' },
      commissions: { table: EVENTS_CPU, row: EVENT_ROW, column: 'commissions' },
    },
    nats: { table: EVENTS_CPU, row: EVENT_ROW, column: 'nats-server*' },
    postgres: { table: EVENTS_PG, row: EVENT_ROW, column: 'µs' },
  },
  delivery: {
    label: 'webhook delivery (fan-out, sign, POST, record)',
    services: { dispatcher: { table: WEBHOOK_CPU, row: DELIVERY_ROW, column: 'dispatcher' } },
    nats: { table: WEBHOOK_CPU, row: DELIVERY_ROW, column: 'nats-server*' },
    postgres: { table: WEBHOOK_PG, row: DELIVERY_ROW, column: 'µs' },
  },
  affiliateList: {
    label: 'affiliate list page (GET, 25 rows)',
    services: {
      gateway: { table: AFFILIATES_CPU, row: LIST_ROW, column: 'gateway' },
      affiliates: { table: AFFILIATES_CPU, row: LIST_ROW, column: 'affiliates' },
    },
    nats: { table: AFFILIATES_CPU, row: LIST_ROW, column: 'nats-server*' },
    // No per-database row for this part: every Postgres process on the machine (nothing else ran).
    postgres: { table: AFFILIATES_CPU, row: LIST_ROW, column: 'postgres*' },
  },
} satisfies Record<
  string,
  { label: string; services: Record<string, FigureRef>; nats: FigureRef; postgres: FigureRef }
>;

/** The assumptions of a production deployment. */
export const ASSUMPTIONS = {
  /** The conversion-event rates the projection is made for. */
  eventRates: [1_000, 10_000, 100_000],
  /** Webhook deliveries per conversion event: its `commission.created` to one subscribed endpoint. */
  deliveriesPerEvent: 1,
  /** Affiliate list pages read per conversion event (dashboards and API reads beside the writes). */
  listReadsPerEvent: 0.1,
  /** Share of one core a Node replica is run at: headroom for bursts, GC and a replica lost. */
  replicaUtilisation: 0.6,
  /** Fewest replicas of each service: one can be lost or rolled. */
  minReplicas: 2,
  /** Share of its cores a Postgres primary is run at. */
  postgresUtilisation: 0.6,
  /** JetStream replicas: each stream message is stored and acknowledged by this many servers. */
  jetstreamReplicas: 3,
  /**
   * Postgres primary sizes (vCPU); the last is the largest single primary planned for: past it one primary's WAL and
   * hot-row locks, not its cores, set the pace, and a Citus worker of that size is the next step.
   */
  postgresSizes: [2, 4, 8, 16, 32, 64],
  /** Affiliates the storage projection is made for. */
  affiliates: 100_000_000,
} as const;

/**
 * Bytes per row, table and its indexes (pg_total_relation_size / rows after VACUUM ANALYZE), measured on 2026-11-26
 * with bench/seed.ts (100,000 affiliates) and bench/dashboard-seed.ts (1,000,000 commissions, 250,000 processed
 * conversions) on Postgres 15.
 */
export const BYTES_PER_ROW = {
  affiliates: 987,
  commissions: 1_154,
  processed_conversions: 514,
} as const;
