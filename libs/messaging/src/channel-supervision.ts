import type { AmqpConnectionManager, ChannelWrapper } from 'amqp-connection-manager';
import type { Channel } from 'amqplib';
import { queueTypeMismatchHint } from './broker-urls';

/** How long a channel whose setup failed waits before the connection is renewed (a broker refusing the setup is not hammered). */
export const CHANNEL_RENEW_DELAY_MS = 1000;

export interface ChannelSupervision {
  /** Stops renewing: the owner is closing its connection. */
  stop(): void;
  /** Renews the connection now (after CHANNEL_RENEW_DELAY_MS), e.g. when the broker cancelled a consumer. */
  renew(why: string): void;
}

/**
 * Keeps a channel of amqp-connection-manager alive:
 * - the wrapper emits 'error' when a setup fails (a queue declared with other arguments, a reply
 *   consumer refused…) — unheard, that ends the process; heard here, it is logged and the
 *   connection renewed after CHANNEL_RENEW_DELAY_MS (the manager only sets a channel up again on
 *   a new connection), every time with the broker's reason in the log;
 * - each amqplib channel gets an 'error' listener, and a channel the broker closes while the
 *   connection stays up renews the connection too, instead of leaving the wrapper without a
 *   channel until some later reconnect.
 */
export function superviseChannel(
  connection: () => Pick<AmqpConnectionManager, 'isConnected' | 'reconnect'> | null | undefined,
  wrapper: ChannelWrapper,
  options: { label: string; warn: (message: string) => void; delayMs?: number },
): ChannelSupervision {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let open: Channel | undefined;
  /** `always`: renew even if a channel is open (a failed setup leaves the channel open but half set up). */
  const renew = (why: string, always: boolean) => {
    if (stopped || timer) return;
    options.warn(`${options.label}: ${why}; renewing the broker connection`);
    timer = setTimeout(() => {
      timer = undefined;
      const manager = connection();
      // Lost with the connection (it reconnects by itself), or already set up again: nothing to do.
      if (stopped || !manager?.isConnected() || (open && !always)) return;
      try {
        manager.reconnect();
      } catch (error) {
        options.warn(`${options.label}: could not renew the broker connection: ${(error as Error).message}`);
      }
    }, options.delayMs ?? CHANNEL_RENEW_DELAY_MS);
    timer.unref?.();
  };
  wrapper.on('error', (error: Error) => {
    // A classic queue where this release declares a quorum one: say how to fix it, every time.
    const hint = queueTypeMismatchHint(error.message);
    if (hint) options.warn(`${options.label}: ${hint}`);
    renew(`channel setup failed (${error.message})`, true);
  });
  void wrapper.addSetup((channel: Channel) => {
    open = channel;
    channel.on('error', (error: Error) => options.warn(`${options.label}: channel error (${error.message})`));
    channel.once('close', () => {
      if (open !== channel) return;
      open = undefined;
      if (connection()?.isConnected()) renew('the broker closed the channel', false);
    });
  });
  return {
    renew: (why: string) => renew(why, true),
    stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
