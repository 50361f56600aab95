import { runMain } from '@platform/shared/main';
import { loadPaymentsConfig } from './config.ts';
import { startPaymentsService } from './service.ts';

runMain('payments', () => startPaymentsService(loadPaymentsConfig()));
