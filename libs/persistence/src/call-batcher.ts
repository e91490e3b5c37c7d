/**
 * Runs many small calls as fewer batch calls, without waiting for a batch to fill: a call starts at
 * once while fewer than `maxConcurrent` batches are running, and the calls that arrive while they
 * all are wait and go together as the next batch (up to `maxBatch` each). So a lone call costs no
 * extra latency, and under load each statement carries as many calls as arrived during the last
 * one's round trip (what a database's group commit does for its log flushes).
 *
 * Used where one SQL statement per request was most of a request's cost at the database: a consent
 * token's verification (one conditional UPDATE each) becomes one UPDATE for the tokens checked
 * meanwhile. `run` receives the inputs of one batch and answers one output per input, in order; if
 * it fails, or answers the wrong number of outputs, every call of that batch fails with its error.
 */
export class CallBatcher<Input, Output> {
  private readonly waiting: Array<{ input: Input; resolve: (output: Output) => void; reject: (error: unknown) => void }> = [];
  private running = 0;

  constructor(
    private readonly run: (inputs: Input[]) => Promise<Output[]>,
    private readonly options: { maxBatch: number; maxConcurrent: number },
  ) {
    if (!(options.maxBatch >= 1 && options.maxConcurrent >= 1)) throw new Error('CallBatcher needs maxBatch and maxConcurrent of at least 1');
  }

  /** The output for this input, from the batch it joined. */
  call(input: Input): Promise<Output> {
    return new Promise<Output>((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      if (this.running < this.options.maxConcurrent) this.startBatch();
    });
  }

  /** Calls waiting for a batch (for tests and metrics). */
  get queued(): number {
    return this.waiting.length;
  }

  private startBatch(): void {
    const batch = this.waiting.splice(0, this.options.maxBatch);
    if (batch.length === 0) return;
    this.running++;
    let outputs: Promise<Output[]>;
    try {
      outputs = this.run(batch.map((call) => call.input));
    } catch (error) {
      outputs = Promise.reject(error);
    }
    outputs
      .then((answers) => {
        if (!Array.isArray(answers) || answers.length !== batch.length) {
          throw new Error(`A batch of ${batch.length} calls answered ${Array.isArray(answers) ? answers.length : 'no'} outputs`);
        }
        batch.forEach((call, index) => call.resolve(answers[index]));
      })
      .catch((error: unknown) => {
        for (const call of batch) call.reject(error);
      })
      .finally(() => {
        this.running--;
        if (this.waiting.length > 0) this.startBatch();
      });
  }
}
