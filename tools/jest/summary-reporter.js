// Ends a run with the plain closing line CI reads: "N passed, N failed[, N skipped]".
class PlainSummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const line = `${results.numPassedTests} passed, ${results.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}`;
    process.stdout.write(`\n${line}\n`);
  }
}

module.exports = PlainSummaryReporter;
