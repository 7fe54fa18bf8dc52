// The example's chat page: the AI SDK's useChat against POST /agent/stream (same origin).
// Shows every part of an assistant message: text, reasoning, and each tool call with its input and output.
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport } from 'ai';
import { useState } from 'react';
import { createRoot } from 'react-dom/client';

const root = document.getElementById('root');
const api = root.dataset.api || '/agent/stream';
const orchestrator = root.dataset.orchestrator || '';

function toolName(part) {
  return part.type === 'dynamic-tool' ? part.toolName : part.type.slice('tool-'.length);
}

function show(value) {
  if (value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

function ToolPart({ part }) {
  return (
    <div className={`tool tool-${part.state}`} data-testid="tool" data-tool-name={toolName(part)}
      data-state={part.state}>
      <div className="tool-head">
        <span className="label">tool</span> <b>{toolName(part)}</b>
        <span className="badge" data-testid="tool-state">{part.state}</span>
      </div>
      <div className="label">input</div>
      <pre data-testid="tool-input">{show(part.input)}</pre>
      {part.state === 'output-available' && (<>
        <div className="label">output</div>
        <pre data-testid="tool-output">{show(part.output)}</pre>
      </>)}
      {part.state === 'output-error' && <pre className="error" data-testid="tool-error">{part.errorText}</pre>}
    </div>
  );
}

function Part({ part }) {
  if (part.type === 'text') return <div className="text" data-testid="text">{part.text}</div>;
  if (part.type === 'reasoning') {
    return <div className="reasoning" data-testid="reasoning"><span className="label">reasoning</span> {part.text}</div>;
  }
  if (part.type === 'dynamic-tool' || part.type.startsWith('tool-')) return <ToolPart part={part} />;
  return null; // step-start and data parts are not shown
}

function App() {
  const [input, setInput] = useState('');
  const [stopped, setStopped] = useState(false);
  const { messages, sendMessage, status, error, stop } = useChat({
    transport: new DefaultChatTransport({ api }),
  });
  const busy = status === 'submitted' || status === 'streaming';

  function submit(event) {
    event.preventDefault();
    if (!input.trim() || busy) return;
    setStopped(false);
    sendMessage({ text: input });
    setInput('');
  }

  return (
    <main>
      <header>
        <h1>Agent 365 chat</h1>
        <span className="badge" data-testid="orchestrator">{orchestrator}</span>
        <span className="badge" data-testid="status">{status}</span>
      </header>
      <section className="messages">
        {messages.map((message) => (
          <article key={message.id} className={`message ${message.role}`} data-testid={`message-${message.role}`}>
            <div className="role">{message.role}</div>
            {message.parts.map((part, index) => <Part key={index} part={part} />)}
          </article>
        ))}
        {busy && <div className="pending" data-testid="pending">…</div>}
        {stopped && <div className="notice" data-testid="stopped">Stopped: the answer was cut short.</div>}
        {error && <div className="error" role="alert" data-testid="error">Error: {error.message}</div>}
      </section>
      <form onSubmit={submit}>
        <input data-testid="input" value={input} placeholder="Ask something…"
          onChange={(event) => setInput(event.target.value)} />
        {busy
          ? <button type="button" data-testid="stop" onClick={() => { stop(); setStopped(true); }}>Stop</button>
          : <button type="submit" data-testid="send">Send</button>}
      </form>
    </main>
  );
}

createRoot(root).render(<App />);
