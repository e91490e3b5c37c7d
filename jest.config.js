// `npm test` runs every project's tests in one Jest invocation.
module.exports = {
  // Whole-country tests boot sixteen services; unit tests finish far sooner.
  testTimeout: 60000,
  reporters: ['default', '<rootDir>/tools/jest/summary-reporter.js'],
  projects: ['<rootDir>/apps/*/jest.config.js', '<rootDir>/libs/*/jest.config.js', '<rootDir>/e2e/jest.config.js'],
};
