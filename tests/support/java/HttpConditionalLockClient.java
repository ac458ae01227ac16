package hudietc.judge;

import java.io.ByteArrayInputStream;
import java.lang.reflect.Constructor;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Properties;
import java.util.UUID;
import java.util.function.Supplier;

import org.apache.hudi.client.transaction.lock.StorageBasedLockProvider;
import org.apache.hudi.client.transaction.lock.StorageLockClient;
import org.apache.hudi.client.transaction.lock.models.HeartbeatManager;
import org.apache.hudi.client.transaction.lock.models.LockGetResult;
import org.apache.hudi.client.transaction.lock.models.LockProviderHeartbeatManager;
import org.apache.hudi.client.transaction.lock.models.LockUpsertResult;
import org.apache.hudi.client.transaction.lock.models.StorageLockData;
import org.apache.hudi.client.transaction.lock.models.StorageLockFile;
import org.apache.hudi.common.config.TypedProperties;
import org.apache.hudi.common.util.Functions;
import org.apache.hudi.common.util.Option;
import org.apache.hudi.common.util.collection.Pair;
import org.slf4j.LoggerFactory;

/**
 * The tests' stand-in for hudi-aws's S3StorageLockClient (Maven Central as served here refuses
 * hudi-aws 1.1.1 and 1.2.0): the same S3 requests (GET of the lock object; PUT with
 * "If-None-Match: *" when there was none, else "If-Match: <ETag read>"; 412 means another writer
 * got there first) over plain HTTP, path-style and unsigned, to the tests' S3-compatible server
 * (a bucket open to anonymous requests). Everything else (when to take, renew and release, the
 * lease's JSON) is Hudi's own StorageBasedLockProvider of the line on the classpath, built
 * through its constructor for tests with this client.
 */
public class HttpConditionalLockClient implements StorageLockClient {
  private final String endpoint;
  private final String bucket;
  private final String key;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

  public HttpConditionalLockClient(String endpoint, String lockFilePath) {
    Pair<String, String> bk = StorageLockClient.parseBucketAndPath(lockFilePath);
    this.endpoint = endpoint;
    this.bucket = bk.getLeft();
    this.key = bk.getRight();
  }

  private URI uri(String bucket, String key) {
    return URI.create(endpoint + "/" + bucket + "/" + key);
  }

  private HttpResponse<byte[]> send(HttpRequest request) throws Exception {
    return http.send(request, HttpResponse.BodyHandlers.ofByteArray());
  }

  private HttpResponse<byte[]> get(String bucket, String key) throws Exception {
    return send(HttpRequest.newBuilder(uri(bucket, key)).GET().build());
  }

  @Override
  public Pair<LockUpsertResult, Option<StorageLockFile>> tryUpsertLockFile(StorageLockData data,
                                                                           Option<StorageLockFile> previous) {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri(bucket, key))
        .header("Content-Type", "application/octet-stream")
        .PUT(HttpRequest.BodyPublishers.ofByteArray(StorageLockFile.toByteArray(data)));
    if (previous.isPresent()) {
      b.header("If-Match", previous.get().getVersionId());
    } else {
      b.header("If-None-Match", "*");
    }
    try {
      HttpResponse<byte[]> r = send(b.build());
      if (r.statusCode() == 200) {
        return Pair.of(LockUpsertResult.SUCCESS,
            Option.of(new StorageLockFile(data, r.headers().firstValue("ETag").orElse(null))));
      }
      if (r.statusCode() == 412) {
        return Pair.of(LockUpsertResult.ACQUIRED_BY_OTHERS, Option.empty());
      }
      return Pair.of(LockUpsertResult.UNKNOWN_ERROR, Option.empty());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Pair.of(LockUpsertResult.UNKNOWN_ERROR, Option.empty());
    } catch (Exception e) {
      return Pair.of(LockUpsertResult.UNKNOWN_ERROR, Option.empty());
    }
  }

  @Override
  public Pair<LockGetResult, Option<StorageLockFile>> readCurrentLockFile() {
    try {
      HttpResponse<byte[]> r = get(bucket, key);
      if (r.statusCode() == 404) {
        return Pair.of(LockGetResult.NOT_EXISTS, Option.empty());
      }
      if (r.statusCode() != 200) {
        return Pair.of(LockGetResult.UNKNOWN_ERROR, Option.empty());
      }
      return Pair.of(LockGetResult.SUCCESS, Option.of(StorageLockFile.createFromStream(
          new ByteArrayInputStream(r.body()), r.headers().firstValue("ETag").orElse(null))));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Pair.of(LockGetResult.UNKNOWN_ERROR, Option.empty());
    } catch (Exception e) {
      return Pair.of(LockGetResult.UNKNOWN_ERROR, Option.empty());
    }
  }

  @Override
  public Option<String> readObject(String filePath, boolean checkExistsFirst) {
    try {
      Pair<String, String> bk = StorageLockClient.parseBucketAndPath(filePath);
      HttpResponse<byte[]> r = get(bk.getLeft(), bk.getRight());
      return r.statusCode() == 200 ? Option.of(new String(r.body(), StandardCharsets.UTF_8)) : Option.empty();
    } catch (Exception e) {
      return Option.empty();
    }
  }

  @Override
  public boolean writeObject(String filePath, String content) {
    try {
      Pair<String, String> bk = StorageLockClient.parseBucketAndPath(filePath);
      return send(HttpRequest.newBuilder(uri(bk.getLeft(), bk.getRight()))
          .header("Content-Type", "application/octet-stream")
          .PUT(HttpRequest.BodyPublishers.ofString(content)).build()).statusCode() == 200;
    } catch (Exception e) {
      return false;
    }
  }

  @Override
  public void close() {
  }

  /** Hudi's StorageBasedLockProvider of this classpath's line, with this client for its lock file. */
  public static StorageBasedLockProvider provider(String endpoint, Properties props) throws Exception {
    TypedProperties typed = new TypedProperties();
    typed.putAll(props);
    Functions.Function3<String, Long, Supplier<Boolean>, HeartbeatManager> heartbeats = LockProviderHeartbeatManager::new;
    Functions.Function3<String, String, TypedProperties, StorageLockClient> clients =
        (owner, lockFilePath, p) -> new HttpConditionalLockClient(endpoint, lockFilePath);
    for (Constructor<?> c : StorageBasedLockProvider.class.getDeclaredConstructors()) {
      if (c.getParameterCount() == 6) {
        c.setAccessible(true);
        return (StorageBasedLockProvider) c.newInstance(UUID.randomUUID().toString(), typed, heartbeats, clients,
            LoggerFactory.getLogger(StorageBasedLockProvider.class), null);
      }
    }
    throw new IllegalStateException("StorageBasedLockProvider has no constructor for tests on this line");
  }
}
