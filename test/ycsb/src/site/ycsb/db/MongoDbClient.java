/*
 * A stand-in for YCSB's MongoDB binding on this project's test machines and
 * embedded cluster, written for dbperf-operator (not YCSB's code): YCSB's
 * bindings are not published to Maven Central, only its core client, which
 * hack/fetch-ycsb.sh fetches. It has the binding's class name and reads the
 * same mongodb.url, so the command the operator builds runs unchanged
 * against a MongoDB-wire server (FerretDB here). Its numbers are not the
 * real binding's: it checks that a run works, end to end. Records are one
 * document each, _id the key, every field a binary value.
 */
package site.ycsb.db;

import com.mongodb.ConnectionString;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.result.DeleteResult;
import com.mongodb.client.result.UpdateResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.Vector;
import org.bson.Document;
import org.bson.types.Binary;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

public class MongoDbClient extends DB {
  // YCSB makes one DB per client thread; they share one connection pool.
  private static final Object LOCK = new Object();
  private static MongoClient client;
  private static MongoDatabase database;
  private static int users;

  @Override
  public void init() throws DBException {
    synchronized (LOCK) {
      users++;
      if (client != null) {
        return;
      }
      String url = getProperties().getProperty("mongodb.url", "mongodb://localhost:27017/ycsb?w=1");
      try {
        ConnectionString cs = new ConnectionString(url);
        client = MongoClients.create(cs);
        String name = cs.getDatabase() == null || cs.getDatabase().isEmpty() ? "ycsb" : cs.getDatabase();
        database = client.getDatabase(name);
      } catch (RuntimeException e) {
        throw new DBException("mongodb.url " + url.replaceAll("//[^@/]*@", "//") + ": " + describe(e), e);
      }
    }
  }

  @Override
  public void cleanup() throws DBException {
    synchronized (LOCK) {
      if (--users == 0 && client != null) {
        client.close();
        client = null;
        database = null;
      }
    }
  }

  private static MongoCollection<Document> collection(String table) {
    return database.getCollection(table);
  }

  private static Document fieldsOf(Map<String, ByteIterator> values) {
    Document d = new Document();
    for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
      d.put(e.getKey(), new Binary(e.getValue().toArray()));
    }
    return d;
  }

  private static void copy(Document doc, Map<String, ByteIterator> into) {
    for (Map.Entry<String, Object> e : doc.entrySet()) {
      if (e.getKey().equals("_id")) {
        continue;
      }
      Object v = e.getValue();
      byte[] b = v instanceof Binary ? ((Binary) v).getData() : String.valueOf(v).getBytes();
      into.put(e.getKey(), new ByteArrayByteIterator(b));
    }
  }

  @Override
  public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
    try {
      var find = collection(table).find(Filters.eq("_id", key));
      if (fields != null) {
        find = find.projection(Projections.include(new ArrayList<>(fields)));
      }
      Document doc = find.first();
      if (doc == null) {
        return Status.NOT_FOUND;
      }
      copy(doc, result);
      return Status.OK;
    } catch (RuntimeException e) {
      System.err.println("read " + key + ": " + describe(e));
      return Status.ERROR;
    }
  }

  @Override
  public Status scan(String table, String startkey, int recordcount, Set<String> fields,
      Vector<HashMap<String, ByteIterator>> result) {
    var find = collection(table).find(Filters.gte("_id", startkey)).sort(Sorts.ascending("_id")).limit(recordcount);
    if (fields != null) {
      find = find.projection(Projections.include(new ArrayList<>(fields)));
    }
    try (MongoCursor<Document> cursor = find.iterator()) {
      while (cursor.hasNext()) {
        HashMap<String, ByteIterator> row = new HashMap<>();
        copy(cursor.next(), row);
        result.add(row);
      }
      return Status.OK;
    } catch (RuntimeException e) {
      System.err.println("scan " + startkey + ": " + describe(e));
      return Status.ERROR;
    }
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    try {
      UpdateResult r = collection(table).updateOne(Filters.eq("_id", key), new Document("$set", fieldsOf(values)));
      return r.getMatchedCount() == 0 ? Status.NOT_FOUND : Status.OK;
    } catch (RuntimeException e) {
      System.err.println("update " + key + ": " + describe(e));
      return Status.ERROR;
    }
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    try {
      Document doc = fieldsOf(values);
      doc.put("_id", key);
      collection(table).insertOne(doc);
      return Status.OK;
    } catch (RuntimeException e) {
      System.err.println("insert " + key + ": " + describe(e));
      return Status.ERROR;
    }
  }

  @Override
  public Status delete(String table, String key) {
    try {
      DeleteResult r = collection(table).deleteOne(Filters.eq("_id", key));
      return r.getDeletedCount() == 0 ? Status.NOT_FOUND : Status.OK;
    } catch (RuntimeException e) {
      System.err.println("delete " + key + ": " + describe(e));
      return Status.ERROR;
    }
  }

  /** The exception's message and its causes', as the real binding's stack trace would show them. */
  private static String describe(Throwable e) {
    StringBuilder b = new StringBuilder(String.valueOf(e.getMessage()));
    for (Throwable c = e.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
      b.append("; caused by: ").append(c.getMessage());
    }
    return b.toString();
  }
}
