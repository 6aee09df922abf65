package a2aflow;

import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.google.gson.GsonBuilder;

import io.a2a.A2A;
import io.a2a.client.Client;
import io.a2a.client.ClientEvent;
import io.a2a.client.MessageEvent;
import io.a2a.client.TaskEvent;
import io.a2a.client.TaskUpdateEvent;
import io.a2a.client.config.ClientConfig;
import io.a2a.client.http.A2AHttpClient;
import io.a2a.client.http.A2AHttpResponse;
import io.a2a.client.http.JdkA2AHttpClient;
import io.a2a.client.transport.grpc.GrpcTransport;
import io.a2a.client.transport.grpc.GrpcTransportConfigBuilder;
import io.a2a.client.transport.jsonrpc.JSONRPCTransport;
import io.a2a.client.transport.jsonrpc.JSONRPCTransportConfigBuilder;
import io.a2a.client.transport.rest.RestTransport;
import io.a2a.client.transport.rest.RestTransportConfigBuilder;
import io.a2a.client.transport.spi.interceptors.ClientCallContext;
import io.a2a.spec.AgentCard;
import io.a2a.spec.AgentInterface;
import io.a2a.spec.Artifact;
import io.a2a.spec.DataPart;
import io.a2a.spec.DeleteTaskPushNotificationConfigParams;
import io.a2a.spec.FilePart;
import io.a2a.spec.FileWithBytes;
import io.a2a.spec.GetTaskPushNotificationConfigParams;
import io.a2a.spec.JSONRPCError;
import io.a2a.spec.ListTaskPushNotificationConfigParams;
import io.a2a.spec.Message;
import io.a2a.spec.Part;
import io.a2a.spec.PushNotificationConfig;
import io.a2a.spec.Task;
import io.a2a.spec.TaskArtifactUpdateEvent;
import io.a2a.spec.TaskIdParams;
import io.a2a.spec.TaskPushNotificationConfig;
import io.a2a.spec.TaskQueryParams;
import io.a2a.spec.TaskState;
import io.a2a.spec.TaskStatusUpdateEvent;
import io.a2a.spec.TextPart;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;

/**
 * Drives an a2aflow server with the A2A 0.3 release of the official A2A
 * Java SDK (a2a-java 0.3.3.Final), as tests/java's a2aflow.A2AClient does
 * with its 1.0 release; the report has the same shape, with A2A 1.0's names
 * for states and roles ("TASK_STATE_COMPLETED", "ROLE_USER") so that
 * tests/java_test.go compares it with the same expectations. A2A 0.3 has no
 * ListTasks.
 *
 * <pre>
 *   java a2aflow.A2AClient03 &lt;base URL&gt; &lt;JSONRPC|HTTP+JSON|GRPC&gt; 0.3 &lt;webhook URL&gt;
 * </pre>
 */
public final class A2AClient03 {

    private static final long TIMEOUT_SECONDS = 60;

    private final Set<String> wire = new ConcurrentSkipListSet<>();
    private final Map<String, Object> report = new LinkedHashMap<>();
    private final Map<String, String> failures = new TreeMap<>();
    private final Map<String, Object> more = new LinkedHashMap<>();

    private final String baseUrl;
    private final String binding;
    private final String hook;
    private final ClientCallContext ctx = new ClientCallContext(new HashMap<>(), new HashMap<>());

    private Client client;
    private Client streamer;
    private Client pngOnly;
    private Task completed;
    private String cancelAgain;

    private A2AClient03(String baseUrl, String binding, String hook) {
        this.baseUrl = baseUrl;
        this.binding = binding;
        this.hook = hook;
        report.put("failures", failures);
        report.put("more", more);
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 4 || !args[2].equals("0.3")) {
            System.err.println("usage: A2AClient03 <base URL> <JSONRPC|HTTP+JSON|GRPC> 0.3 <webhook URL>");
            System.exit(2);
        }
        A2AClient03 c = new A2AClient03(args[0], args[1], args[3]);
        c.run();
        System.out.println(new GsonBuilder().disableHtmlEscaping().serializeNulls().create().toJson(c.report));
        System.out.flush();
        System.exit(0);
    }

    @FunctionalInterface
    private interface Scenario {
        void run() throws Exception;
    }

    private void scenario(String name, Scenario s) {
        try {
            s.run();
        } catch (Throwable e) {
            failures.put(name, describe(e));
            System.err.println("scenario " + name + ":");
            e.printStackTrace();
        }
    }

    private static String describe(Throwable e) {
        Throwable t = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }

    private void run() throws Exception {
        AgentCard card = A2A.getAgentCard(new JdkA2AHttpClient(), baseUrl);
        // What a 0.3 client sees: the preferred transport and the
        // additional interfaces.
        List<String> interfaces = new ArrayList<>();
        interfaces.add(card.preferredTransport() + " " + card.protocolVersion());
        for (AgentInterface i : card.additionalInterfaces() == null ? List.<AgentInterface>of() : card.additionalInterfaces()) {
            interfaces.add(i.transport());
        }
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("name", card.name());
        c.put("streaming", card.capabilities() != null && card.capabilities().streaming());
        c.put("interfaces", interfaces);
        report.put("card", c);

        String basePath = URI.create(baseUrl).getPath().replaceAll("/+$", "");
        List<ManagedChannel> channels = Collections.synchronizedList(new ArrayList<>());
        client = build(card, basePath, channels, ClientConfig.builder().setStreaming(false));
        streamer = build(card, basePath, channels, ClientConfig.builder().setStreaming(true));
        pngOnly = build(card, basePath, channels, ClientConfig.builder().setStreaming(false).setAcceptedOutputModes(List.of("image/png")));
        try {
            scenarios();
        } finally {
            for (Client x : List.of(client, streamer, pngOnly)) {
                x.close();
            }
            for (ManagedChannel ch : channels) {
                ch.shutdownNow();
            }
        }
        report.put("wire", new ArrayList<>(new TreeSet<>(wire)));
    }

    /** A client of the asked binding alone: only its transport is configured. */
    private Client build(AgentCard card, String basePath, List<ManagedChannel> channels, ClientConfig.Builder config)
            throws Exception {
        ClientInterceptor wireGrpc = new ClientInterceptor() {
            @Override
            public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
                return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
                    @Override
                    public void start(Listener<R> listener, Metadata headers) {
                        String v = headers.get(Metadata.Key.of("a2a-version", Metadata.ASCII_STRING_MARSHALLER));
                        wire.add("GRPC " + (v == null ? "none" : v));
                        super.start(listener, headers);
                    }
                };
            }
        };
        A2AHttpClient http = new WireHttpClient(new JdkA2AHttpClient(), basePath, wire);
        var b = Client.builder(card).clientConfig(config.setUseClientPreference(true).build());
        switch (binding) {
            case "JSONRPC" -> b.withTransport(JSONRPCTransport.class, new JSONRPCTransportConfigBuilder().httpClient(http));
            case "HTTP+JSON" -> b.withTransport(RestTransport.class, new RestTransportConfigBuilder().httpClient(http));
            case "GRPC" -> b.withTransport(GrpcTransport.class, new GrpcTransportConfigBuilder().channelFactory(url -> {
                String target = url.replaceFirst("^(grpc|https?)://", "").replaceAll("/+$", "");
                ManagedChannel ch = ManagedChannelBuilder.forTarget(target).usePlaintext().intercept(wireGrpc).build();
                channels.add(ch);
                return ch;
            }));
            default -> throw new IllegalArgumentException("binding " + binding);
        }
        return b.build();
    }

    // ---- helpers ------------------------------------------------------

    private static Message message(String text, String taskId) {
        Message.Builder b = new Message.Builder()
                .role(Message.Role.USER)
                .messageId(UUID.randomUUID().toString())
                .parts(new TextPart(text));
        if (taskId != null && !taskId.isEmpty()) {
            b.taskId(taskId);
        }
        return b.build();
    }

    private static String textOf(Message m) {
        if (m == null) {
            return "";
        }
        StringBuilder sb = new StringBuilder();
        for (Part<?> p : m.getParts()) {
            if (p instanceof TextPart t) {
                sb.append(t.getText());
            }
        }
        return sb.toString();
    }

    /** A 0.3 state by its 1.0 name, as the Go tests write them. */
    private static String state(TaskState s) {
        return "TASK_STATE_" + s.name();
    }

    private static String label(ClientEvent ev) {
        if (ev instanceof TaskEvent te) {
            return "task:" + state(te.getTask().getStatus().state());
        }
        if (ev instanceof TaskUpdateEvent tu) {
            if (tu.getUpdateEvent() instanceof TaskStatusUpdateEvent s) {
                return "status:" + state(s.getStatus().state());
            }
            if (tu.getUpdateEvent() instanceof TaskArtifactUpdateEvent a) {
                return "artifact:" + a.getArtifact().name();
            }
        }
        if (ev instanceof MessageEvent) {
            return "message";
        }
        return "unknown:" + ev;
    }

    /** As A2AClient.isLast. */
    private static boolean isLast(ClientEvent ev, boolean interrupts) {
        if (ev instanceof TaskEvent te) {
            return te.getTask().getStatus().state().isFinal();
        }
        if (ev instanceof TaskUpdateEvent tu && tu.getUpdateEvent() instanceof TaskStatusUpdateEvent s) {
            TaskState st = s.getStatus().state();
            return st.isFinal() || interrupts && (st == TaskState.INPUT_REQUIRED || st == TaskState.AUTH_REQUIRED);
        }
        return false;
    }

    private static final Map<Integer, String> CODE_NAMES = Map.of(
            -32001, "TaskNotFound",
            -32002, "TaskNotCancelable",
            -32004, "UnsupportedOperation",
            -32005, "ContentTypeNotSupported",
            -32602, "InvalidParams");

    /** As A2AClient.errorName, for the 0.3 release's JSONRPCError classes. */
    static String errorName(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof JSONRPCError && c.getClass() != JSONRPCError.class) {
                String n = c.getClass().getSimpleName();
                return n.endsWith("Error") ? n.substring(0, n.length() - "Error".length()) : n;
            }
        }
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof JSONRPCError j && j.getCode() != null && CODE_NAMES.containsKey(j.getCode())) {
                return CODE_NAMES.get(j.getCode()) + " (untyped)";
            }
            Matcher m = Pattern.compile("(-320\\d\\d)").matcher(String.valueOf(c.getMessage()));
            if (m.find() && CODE_NAMES.containsKey(Integer.parseInt(m.group(1)))) {
                return CODE_NAMES.get(Integer.parseInt(m.group(1))) + " (untyped)";
            }
        }
        Throwable t = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
        return "other: " + t.getClass().getSimpleName() + ": " + t.getMessage();
    }

    @FunctionalInterface
    private interface Call {
        Object call() throws Exception;
    }

    private static String expectError(Call fn) {
        Object got;
        try {
            got = fn.call();
        } catch (Throwable e) {
            return errorName(e);
        }
        if (got instanceof List<?> l) {
            return "no error, events [" + String.join(" ", l.stream().map(String::valueOf).toList()) + "]";
        }
        return "no error";
    }

    /**
     * expectError for a stream refused before it opens. a2a-java 0.3.3's HTTP client
     * (JdkA2AHttpClient asyncRequest) reports a stream request's HTTP error from the
     * response's future; once in CI (2026-12-02, a loaded machine) that report never
     * came and the call waited out TIMEOUT_SECONDS while a2aflow answers such a request
     * within its query bound (10 s). A timeout is tried once more, and said on stderr;
     * the second answer is the one checked.
     */
    private static String expectStreamError(String what, Call fn) {
        String got = expectError(fn);
        if (got.contains("TimeoutException")) {
            System.err.println(what + ": no answer in " + TIMEOUT_SECONDS + " s (" + got + "); tried once more");
            got = expectError(fn);
        }
        return got;
    }

    private static String step(Call fn) {
        try {
            return String.valueOf(fn.call());
        } catch (Throwable e) {
            System.err.println("step:");
            e.printStackTrace();
            return "error: " + errorName(e);
        }
    }

    private static String pushConfig(TaskPushNotificationConfig c) {
        PushNotificationConfig p = c.pushNotificationConfig();
        return (p == null ? "<no config>" : p.id()) + " " + c.taskId() + " " + (p == null ? "" : p.url());
    }

    private static String pushConfigs(List<TaskPushNotificationConfig> list) {
        List<String> out = new ArrayList<>();
        for (TaskPushNotificationConfig c : list) {
            out.add(c.pushNotificationConfig() == null ? "<no config>" : c.pushNotificationConfig().id() + " " + c.pushNotificationConfig().url());
        }
        return out.toString();
    }

    @FunctionalInterface
    private interface StreamStart {
        void start(List<BiConsumer<ClientEvent, AgentCard>> consumers, Consumer<Throwable> errors) throws Exception;
    }

    /** As A2AClient.collect. */
    private static List<String> collect(StreamStart start, boolean interrupts, BiConsumer<ClientEvent, Integer> onEvent)
            throws Exception {
        List<String> got = Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<Void> done = new CompletableFuture<>();
        BiConsumer<ClientEvent, AgentCard> consumer = (ev, card) -> {
            int n;
            synchronized (got) {
                got.add(label(ev));
                n = got.size();
            }
            if (onEvent != null) {
                onEvent.accept(ev, n);
            }
            if (isLast(ev, interrupts)) {
                done.complete(null);
            }
        };
        start.start(List.of(consumer), t -> {
            if (t == null) {
                done.complete(null);
            } else {
                done.completeExceptionally(t);
            }
        });
        done.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        synchronized (got) {
            return new ArrayList<>(got);
        }
    }

    private List<String> stream(Message m, BiConsumer<ClientEvent, Integer> onEvent) throws Exception {
        return collect((consumers, errors) -> streamer.sendMessage(m, consumers, errors, ctx), true, onEvent);
    }

    private List<String> subscribe(String taskId, BiConsumer<ClientEvent, Integer> onEvent) throws Exception {
        return collect((consumers, errors) -> streamer.resubscribe(new TaskIdParams(taskId), consumers, errors, ctx), false,
                onEvent);
    }

    private static Task send(Client c, Message m) throws Exception {
        List<ClientEvent> got = Collections.synchronizedList(new ArrayList<>());
        c.sendMessage(m, List.of((ev, card) -> got.add(ev)), null, null);
        if (got.size() != 1 || !(got.get(0) instanceof TaskEvent te)) {
            throw new IllegalStateException("SendMessage answered " + got + ", want one task");
        }
        return te.getTask();
    }

    private Task send(String text, String taskId) throws Exception {
        return send(client, message(text, taskId));
    }

    // ---- the scenarios ------------------------------------------------

    private void scenarios() {
        scenario("SendMessage", () -> {
            Task task = send("Book a flight", "");
            List<String> steps = new ArrayList<>();
            steps.add(state(task.getStatus().state()) + " " + textOf(task.getStatus().message()));
            for (String answer : List.of("Lisbon", "2026-12-24", "2")) {
                task = send(answer, task.getId());
                String said = task.getStatus().state() == TaskState.COMPLETED ? "" : " " + textOf(task.getStatus().message());
                steps.add(state(task.getStatus().state()) + said);
            }
            report.put("sendMessage", steps);
            List<Artifact> artifacts = task.getArtifacts() == null ? List.of() : task.getArtifacts();
            Map<String, Object> booking = new LinkedHashMap<>();
            booking.put("artifacts", artifacts.size());
            Map<String, Object> data = new HashMap<>();
            String name = "";
            if (!artifacts.isEmpty()) {
                name = artifacts.get(0).name();
                if (!artifacts.get(0).parts().isEmpty() && artifacts.get(0).parts().get(0) instanceof DataPart d) {
                    data.putAll(d.getData());
                }
            }
            booking.put("name", name);
            booking.put("destination", String.valueOf(data.getOrDefault("destination", "")));
            booking.put("date", String.valueOf(data.getOrDefault("date", "")));
            Object travellers = data.get("travellers");
            booking.put("travellers", travellers instanceof Number n ? n.intValue() : 0);
            String ref = String.valueOf(data.getOrDefault("reference", ""));
            booking.put("reference", ref.matches("AF-[A-Z0-9]{6}") ? "AF-XXXXXX" : ref);
            report.put("booking", booking);
            completed = task;
        });

        scenario("GetTask", () -> {
            if (completed == null) {
                throw new IllegalStateException("no completed task (SendMessage failed)");
            }
            // The 0.3 release's TaskQueryParams(id) sends historyLength 0
            // (an int, never absent), which asks for no history: the whole
            // history is asked for with 100.
            Task full = client.getTask(new TaskQueryParams(completed.getId(), 100), ctx);
            Task none = client.getTask(new TaskQueryParams(completed.getId(), 0), ctx);
            // As in A2AClient: the REST GetTask's "%2d" (reported apart).
            Task two = null;
            try {
                two = client.getTask(new TaskQueryParams(completed.getId(), 2), ctx);
            } catch (Exception e) {
                report.put("getTaskHistoryLength2Error", describe(e));
            }
            Map<String, Object> got = new LinkedHashMap<>();
            got.put("state", state(full.getStatus().state()));
            List<String> roles = new ArrayList<>();
            for (Message m : full.getHistory() == null ? List.<Message>of() : full.getHistory()) {
                roles.add("ROLE_" + m.getRole().name());
            }
            got.put("roles", roles);
            got.put("historyLength0", none.getHistory() == null ? 0 : none.getHistory().size());
            got.put("historyLength2", two == null ? -1 : two.getHistory() == null ? 0 : two.getHistory().size());
            report.put("getTask", got);
        });

        scenario("CancelTask", () -> {
            Task task = send("Book a flight", "");
            Task canceled = client.cancelTask(new TaskIdParams(task.getId()), ctx);
            Task got = client.getTask(new TaskQueryParams(task.getId()), ctx);
            report.put("cancelTask", Map.of("canceled", state(canceled.getStatus().state()), "getTask", state(got.getStatus().state())));
            cancelAgain = expectError(() -> streamer.cancelTask(new TaskIdParams(task.getId()), ctx));
        });

        scenario("SendStreamingMessage", () -> {
            List<List<String>> steps = new ArrayList<>();
            AtomicReference<String> taskId = new AtomicReference<>("");
            for (String answer : List.of("Book a flight", "Lisbon", "2026-12-24", "2")) {
                steps.add(stream(message(answer, taskId.get()), (ev, n) -> {
                    if (ev instanceof TaskEvent te) {
                        taskId.set(te.getTask().getId());
                    }
                }));
            }
            report.put("sendStreamingMessage", steps);
        });

        scenario("SubscribeToTask", () -> {
            Task task = send("Book a flight", "");
            CompletableFuture<Void> live = new CompletableFuture<>();
            CompletableFuture<List<String>> events = CompletableFuture.supplyAsync(() -> {
                try {
                    return subscribe(task.getId(), (ev, n) -> live.complete(null));
                } catch (Exception e) {
                    live.completeExceptionally(e);
                    throw new RuntimeException(e);
                }
            });
            live.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            for (String answer : List.of("Lisbon", "2026-12-24", "2")) {
                send(answer, task.getId());
            }
            report.put("subscribeToTask", events.get(TIMEOUT_SECONDS, TimeUnit.SECONDS));
        });

        scenario("errors", () -> {
            String unknown = "no-such-task";
            Map<String, String> errs = new LinkedHashMap<>();
            errs.put("GetTask unknown task", expectError(() -> client.getTask(new TaskQueryParams(unknown), ctx)));
            errs.put("CancelTask unknown task", expectError(() -> client.cancelTask(new TaskIdParams(unknown), ctx)));
            errs.put("SendMessage unknown task", expectError(() -> send("hi", unknown)));
            errs.put("SubscribeToTask unknown task", expectStreamError("SubscribeToTask unknown task", () -> subscribe(unknown, null)));
            if (cancelAgain != null) {
                errs.put("CancelTask canceled task", cancelAgain);
            }
            if (completed != null) {
                errs.put("SendMessage completed task", expectError(() -> send("more", completed.getId())));
                errs.put("SubscribeToTask completed task", expectStreamError("SubscribeToTask completed task", () -> subscribe(completed.getId(), null)));
            }
            report.put("errors", errs);
        });

        scenario("PushConfigs", () -> {
            Task t = send("Book a flight", "");
            more.put("pushTaskId", t.getId());
            String cid = "java-" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
            Map<String, Object> push = new LinkedHashMap<>();
            push.put("id", cid);
            more.put("push", push);
            push.put("created", step(() -> pushConfig(client.setTaskPushNotificationConfiguration(
                    new TaskPushNotificationConfig(t.getId(), new PushNotificationConfig(hook, "tok-java-0123456789", null, cid)), ctx))));
            push.put("got", step(() -> pushConfig(client.getTaskPushNotificationConfiguration(
                    new GetTaskPushNotificationConfigParams(t.getId(), cid, null), ctx))));
            push.put("listed", step(() -> pushConfigs(client.listTaskPushNotificationConfigurations(
                    new ListTaskPushNotificationConfigParams(t.getId(), null), ctx))));
            push.put("deleted", step(() -> {
                client.deleteTaskPushNotificationConfigurations(new DeleteTaskPushNotificationConfigParams(t.getId(), cid, null), ctx);
                return "deleted";
            }));
            push.put("afterDelete", step(() -> pushConfigs(client.listTaskPushNotificationConfigurations(
                    new ListTaskPushNotificationConfigParams(t.getId(), null), ctx))));
            push.put("getDeleted", expectError(() -> client.getTaskPushNotificationConfiguration(
                    new GetTaskPushNotificationConfigParams(t.getId(), cid, null), ctx)));
        });

        scenario("ContentType", () -> {
            byte[] png = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
            Message pngMessage = new Message.Builder()
                    .role(Message.Role.USER)
                    .messageId(UUID.randomUUID().toString())
                    .parts(new FilePart(new FileWithBytes("image/png", "x.png", Base64.getEncoder().encodeToString(png))))
                    .build();
            Map<String, String> ct = new LinkedHashMap<>();
            ct.put("input", expectError(() -> send(client, pngMessage)));
            ct.put("output", expectError(() -> send(pngOnly, message("Book a flight", ""))));
            more.put("contentType", ct);
        });
    }
}
