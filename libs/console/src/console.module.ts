import { DynamicModule, Inject, Logger, Module, OnModuleInit, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { CONSOLE_PATH, findConsoleBuild, loadConsoleSite, registerConsoleRoutes } from './static-site';

const CONSOLE_OPTIONS = Symbol('CONSOLE_OPTIONS');

export interface ConsoleOptions {
  /** The built bundle (default: dist/libs/console/static, found from the module's own location). */
  staticDir?: string;
}

/**
 * The account console (a static single-page app over the `/account` JSON routes) at /console,
 * registered on the host app's Fastify instance. Import it once, in the module of the HTTP edge.
 */
@Module({})
export class ConsoleModule implements OnModuleInit {
  private readonly logger = new Logger('Console');

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Optional() @Inject(CONSOLE_OPTIONS) private readonly options?: ConsoleOptions,
  ) {}

  static forRoot(options: ConsoleOptions): DynamicModule {
    return { module: ConsoleModule, providers: [{ provide: CONSOLE_OPTIONS, useValue: options }] };
  }

  onModuleInit(): void {
    const adapter = this.adapterHost?.httpAdapter;
    if (!adapter) return; // an application context without HTTP
    const root = this.options?.staticDir ?? findConsoleBuild();
    const site = loadConsoleSite(root);
    if (site.files.size === 0) {
      this.logger.warn(`The account console is not built (run npm run build): ${CONSOLE_PATH} answers 503`);
    }
    registerConsoleRoutes(adapter.getInstance<FastifyInstance>(), site);
  }
}
