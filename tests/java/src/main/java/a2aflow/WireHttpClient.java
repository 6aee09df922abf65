package a2aflow;

import java.io.IOException;
import java.net.URI;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import io.a2a.client.http.A2AHttpClient;
import io.a2a.client.http.A2AHttpResponse;

// The same source serves the SDK's 1.0 and 0.3 releases (tests/java and,
// by a symbolic link, tests/java/v03), whose A2AHttpClient is one interface.

/**
 * An A2AHttpClient that notes, for every A2A request, the binding it used
 * (JSON-RPC posts to the base path, HTTP+JSON uses paths under it) and
 * its A2A-Version header, then hands it to the SDK's JDK client.
 */
final class WireHttpClient implements A2AHttpClient {
    private final A2AHttpClient d;
    private final String basePath;
    private final Set<String> wire;

    WireHttpClient(A2AHttpClient d, String basePath, Set<String> wire) {
        this.d = d;
        this.basePath = basePath;
        this.wire = wire;
    }

    void note(String url, Map<String, String> headers) {
        String path = url == null ? "" : URI.create(url).getPath().replaceAll("/+$", "");
        String kind = path.equals(basePath) ? "JSONRPC" : "HTTP+JSON";
        String v = "none";
        for (Map.Entry<String, String> h : headers.entrySet()) {
            if (h.getKey().toLowerCase(Locale.ROOT).equals("a2a-version") && h.getValue() != null) {
                v = h.getValue();
            }
        }
        wire.add(kind + " " + v);
    }

    @Override
    public GetBuilder createGet() {
        GetBuilder g = d.createGet();
        return new GetBuilder() {
            String url;
            final Map<String, String> h = new HashMap<>();

            public GetBuilder url(String s) {
                url = s;
                g.url(s);
                return this;
            }

            public GetBuilder addHeaders(Map<String, String> m) {
                if (m != null) {
                    h.putAll(m);
                }
                g.addHeaders(m);
                return this;
            }

            public GetBuilder addHeader(String n, String v) {
                h.put(n, v);
                g.addHeader(n, v);
                return this;
            }

            public A2AHttpResponse get() throws IOException, InterruptedException {
                note(url, h);
                return g.get();
            }

            public CompletableFuture<Void> getAsyncSSE(Consumer<String> m, Consumer<Throwable> e, Runnable c)
                    throws IOException, InterruptedException {
                note(url, h);
                return g.getAsyncSSE(m, e, c);
            }
        };
    }

    @Override
    public PostBuilder createPost() {
        PostBuilder p = d.createPost();
        return new PostBuilder() {
            String url;
            final Map<String, String> h = new HashMap<>();

            public PostBuilder url(String s) {
                url = s;
                p.url(s);
                return this;
            }

            public PostBuilder addHeaders(Map<String, String> m) {
                if (m != null) {
                    h.putAll(m);
                }
                p.addHeaders(m);
                return this;
            }

            public PostBuilder addHeader(String n, String v) {
                h.put(n, v);
                p.addHeader(n, v);
                return this;
            }

            public PostBuilder body(String b) {
                p.body(b);
                return this;
            }

            public A2AHttpResponse post() throws IOException, InterruptedException {
                note(url, h);
                return p.post();
            }

            public CompletableFuture<Void> postAsyncSSE(Consumer<String> m, Consumer<Throwable> e, Runnable c)
                    throws IOException, InterruptedException {
                note(url, h);
                return p.postAsyncSSE(m, e, c);
            }
        };
    }

    @Override
    public DeleteBuilder createDelete() {
        DeleteBuilder x = d.createDelete();
        return new DeleteBuilder() {
            String url;
            final Map<String, String> h = new HashMap<>();

            public DeleteBuilder url(String s) {
                url = s;
                x.url(s);
                return this;
            }

            public DeleteBuilder addHeaders(Map<String, String> m) {
                if (m != null) {
                    h.putAll(m);
                }
                x.addHeaders(m);
                return this;
            }

            public DeleteBuilder addHeader(String n, String v) {
                h.put(n, v);
                x.addHeader(n, v);
                return this;
            }

            public A2AHttpResponse delete() throws IOException, InterruptedException {
                note(url, h);
                return x.delete();
            }
        };
    }
}
