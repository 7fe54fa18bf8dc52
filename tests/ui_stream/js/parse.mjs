// Validates SSE produced by the Python SDK with the real AI SDK client code:
// parseJsonEventStream + uiMessageChunkSchema (validation), then readUIMessageStream (client state machine).
// One request a line on stdin: {"<scenario>": "<sse text>", ...}; one answer a line on stdout:
// {"<scenario>": {validationErrors, streamErrors, ...}}. It runs until stdin closes (one process serves a test run).
import { createInterface } from 'node:readline';
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema } from 'ai';

function byteStream(text, pieceSize) {
  // Small pieces so frames straddle reads, as they do over a real network.
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) {
        controller.close();
        return;
      }
      controller.enqueue(bytes.slice(offset, offset + pieceSize));
      offset += pieceSize;
    },
  });
}

async function validate(sse) {
  const validationErrors = [];
  const streamErrors = [];
  const errorChunks = [];
  const chunkTypes = [];
  const chunks = parseJsonEventStream({ stream: byteStream(sse, 61), schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(result, controller) {
        if (!result.success) {
          validationErrors.push({ message: String(result.error?.message ?? result.error), raw: result.rawValue });
          return;
        }
        chunkTypes.push(result.value.type);
        if (result.value.type === 'error') errorChunks.push(result.value.errorText);
        controller.enqueue(result.value);
      },
    }),
  );
  let message = null;
  for await (const snapshot of readUIMessageStream({
    stream: chunks,
    onError: (error) => {
      // 'error' chunks are reported here too; only other errors are protocol violations.
      if (!errorChunks.includes(error?.message)) streamErrors.push({ name: error?.name, message: String(error?.message ?? error) });
    },
  })) {
    message = snapshot;
  }
  const lines = sse.split('\n\n').filter((frame) => frame.length > 0);
  return {
    validationErrors,
    streamErrors,
    errorChunks,
    chunkTypes: chunkTypes.length > 2000 ? null : chunkTypes,
    chunkCount: chunkTypes.length,
    endsWithDone: lines[lines.length - 1] === 'data: [DONE]',
    message,
  };
}

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  const results = {};
  for (const [name, sse] of Object.entries(JSON.parse(line))) {
    try {
      results[name] = await validate(sse);
    } catch (error) {
      results[name] = { fatal: String(error?.stack ?? error) };
    }
  }
  process.stdout.write(JSON.stringify(results) + '\n');
}
