// How a class page follows its room: one long-lived POST response of server-sent events.

/** Follow a POST stream of server-sent events, reconnecting with back-off. */
export function follow(url, data, onView, onState) {
  let delay = 500;
  const run = async () => {
    try {
      const response = await fetch(url, {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(data), credentials: "same-origin", cache: "no-store",
      });
      if (response.status === 403 || response.status === 404) {
        onState("refused");
        return;
      }
      if (!response.ok || !response.body) throw new Error(String(response.status));
      onState("open");
      delay = 500;
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const chunk = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const line = chunk.split("\n").find((l) => l.startsWith("data: "));
          if (line) onView(JSON.parse(line.slice(6)));
        }
      }
    } catch (e) { /* reconnect below */ }
    onState("lost");
    setTimeout(run, delay);
    delay = Math.min(delay * 2, 5000);
  };
  run();
}
