import { ChannelModel, connect } from 'amqplib';

/**
 * `RABBITMQ_URL` names one broker or several, comma-separated (the nodes of a cluster):
 * `amqp://u:p@rmq-0:5672,amqp://u:p@rmq-1:5672`. Every connection of ours takes the list; on a
 * lost connection it reconnects to the next node in turn (amqp-connection-manager), so a process
 * follows the cluster when one node goes away.
 */
export function brokerUrls(url: string): string[] {
  const urls = url
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
  if (urls.length === 0) throw new Error('RABBITMQ_URL names no broker');
  return urls;
}

/** A URL for logs: the host and port, never the credentials. */
export function brokerLabel(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || (parsed.protocol === 'amqps:' ? '5671' : '5672')}`;
  } catch {
    return 'an unparsable broker URL';
  }
}

/**
 * The fix for a declare the broker refused because the queue exists with other settings: a classic
 * `observations` or `delivery.events` left from before quorum queues, or a durable RPC queue from
 * before they became transient. Null for any other error.
 */
export function queueTypeMismatchHint(message: string): string | null {
  if (!/PRECONDITION[_-]FAILED/.test(message)) return null;
  const setting = message.includes("'x-queue-type'") ? 'queue type (quorum)' : message.includes("'durable'") ? 'durability (RPC queues are transient)' : null;
  if (!setting) return null;
  const queue = /for queue '([^']+)'/.exec(message)?.[1] ?? 'a queue';
  return (
    `queue '${queue}' exists on the broker with another ${setting} than this release declares; ` +
    'stop the apps and run `npm run admin -- queues:migrate` (docs/operations.md, "Moving to quorum queues")'
  );
}

/** The part of an amqp-connection-manager connection that tells where it is connected. */
interface BrokerEvents {
  on(event: 'connect', listener: (arg: { url: unknown }) => void): unknown;
  on(event: 'disconnect', listener: (arg: { err: Error }) => void): unknown;
}

/**
 * Logs each (re)connect with the node it reached and each lost connection with the broker's reason:
 * with several brokers, the log shows a process moving to the next node.
 */
export function logBrokerMoves(connection: BrokerEvents, label: string, log: { log(message: string): void; warn(message: string): void }): void {
  connection.on('connect', ({ url }) => log.log(`${label}: connected to ${typeof url === 'string' ? brokerLabel(url) : 'the broker'}`));
  connection.on('disconnect', ({ err }) => log.warn(`${label}: broker disconnected (${err?.message ?? 'closed'})`));
}

/**
 * A plain amqplib connection (tools, probes) to the first broker of the list that accepts one;
 * the last refusal when none does.
 */
export async function connectToAny(url: string, socketOptions?: Parameters<typeof connect>[1]): Promise<ChannelModel> {
  let last: unknown;
  for (const candidate of brokerUrls(url)) {
    try {
      return await connect(candidate, socketOptions);
    } catch (error) {
      last = error;
    }
  }
  throw last instanceof Error ? last : new Error(String(last));
}
