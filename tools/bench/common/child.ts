/**
 * A bench's child process (a server it measures): `close` on SIGTERM or SIGINT, then exit 0; a
 * failing `main` prints its error and exits 1.
 */
export function runBenchChild(main: () => Promise<{ close(): Promise<void> }>): void {
  main().then(
    ({ close }) => {
      const stop = async () => {
        await close();
        process.exit(0);
      };
      process.once('SIGTERM', () => void stop());
      process.once('SIGINT', () => void stop());
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
