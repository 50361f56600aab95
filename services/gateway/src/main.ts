import { runMain } from '@platform/shared/main';
import { loadGatewayConfig } from './config.ts';
import { startGateway } from './service.ts';

runMain('gateway', () => startGateway(loadGatewayConfig()));
