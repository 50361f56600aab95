import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The collector of bench/tracing.ts, in a process of its own (its CPU is the collector's, not the services'):
 * an OTLP/HTTP endpoint on 127.0.0.1 that reads every export request, counts requests and bytes, and answers 200
 * with an empty ExportTraceServiceResponse (valid in both the protobuf and the JSON protocol). Started with an IPC
 * channel: it sends { port } once listening and answers { requests, bytes } to every message.
 */
if (!process.send) throw new Error('bench/otlp-sink.ts runs as a child of the benchmark (IPC channel)');
let requests = 0;
let bytes = 0;
const server = createServer((req, res) => {
  req.on('data', (chunk: Buffer) => (bytes += chunk.length));
  req.on('end', () => {
    requests++;
    const json = String(req.headers['content-type']).startsWith('application/json');
    res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
  });
});
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
process.on('message', () => process.send!({ requests, bytes }));
process.on('disconnect', () => process.exit(0));
