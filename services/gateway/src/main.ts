import { runMain } from '@platform/shared/main';
import { withTracing } from '@platform/shared/tracing/start';
import { loadGatewayConfig } from './config.ts';
import { startGateway } from './service.ts';

runMain('gateway', withTracing('gateway', loadGatewayConfig, startGateway));
