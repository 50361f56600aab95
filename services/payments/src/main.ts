import { runMain } from '@platform/shared/main';
import { withTracing } from '@platform/shared/tracing/start';
import { loadPaymentsConfig } from './config.ts';
import { startPaymentsService } from './service.ts';

runMain('payments', withTracing('payments', loadPaymentsConfig, startPaymentsService));
