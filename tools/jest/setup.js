// Decorator metadata needs the reflect polyfill before any decorated class loads.
require('reflect-metadata');
