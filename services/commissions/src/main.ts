import { runMain } from '@platform/shared/main';
import { withTracing } from '@platform/shared/tracing/start';
import { loadCommissionsConfig } from './config.ts';
import { startCommissionsService } from './service.ts';

runMain('commissions', withTracing('commissions', loadCommissionsConfig, startCommissionsService));
