import { log, sleep } from '../../common/infra';
import { state } from '../cleanup';
import { ObservationPublisher, ObservationStream } from '../observations';
import { INGEST_RATE, MAX_RUN_MS } from '../options';
import { Drill } from './prepare';

/** The observation stream, published at INGEST_RATE until it is told to stop creating auctions. */
export class Ingest {
  readonly publisher: ObservationPublisher;
  readonly stream: ObservationStream;
  private ingesting = true;
  private loop: Promise<void> = Promise.resolve();

  constructor(drill: Drill) {
    this.publisher = new ObservationPublisher(drill.rabbitUrl);
    state.closers.push(async () => void (await this.publisher.closeConnection()));
    this.stream = new ObservationStream(drill.tag, this.publisher, INGEST_RATE);
  }

  start(): void {
    this.loop = (async () => {
      const t0 = Date.now();
      while (this.ingesting && !this.stream.done && Date.now() - t0 < MAX_RUN_MS) {
        this.stream.tick();
        await sleep(50);
      }
    })();
  }

  /** No new auctions from now on; the pending updates and ends still go out. */
  stopCreating(): void {
    this.stream.stopCreating();
    log(`faults done; ${this.stream.createdAt.length} auctions created, publishing their last updates and ends`);
  }

  /** Waits for the last updates and ends and for the broker's confirms (60 s at most); the auctions created. */
  async finish(): Promise<number> {
    await this.loop.catch(() => undefined);
    this.ingesting = false;
    for (let i = 0; i < 600 && this.publisher.outstanding > 0; i += 1) {
      this.publisher.flush();
      await sleep(100);
    }
    log(`${this.stream.published} observations published (${this.publisher.republished} sent again after a lost connection); waiting for the pipeline to settle`);
    return this.stream.createdAt.length;
  }
}
