// Test helper for the bloomkit CLI's end-to-end tests: the real Guava on the other side.
//
//   java -cp guava.jar GuavaTool.java write FILE FUNNEL N P ITEM...   create, put, writeTo FILE
//   java -cp guava.jar GuavaTool.java read FILE FUNNEL ITEM...        readFrom FILE, print the
//                                                                     items mightContain accepts
// FUNNEL is utf8, utf16le (unencodedChars), i32 (integer) or i64 (long).
import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

public class GuavaTool {
    @SuppressWarnings({"unchecked", "rawtypes"})
    static Funnel<Object> funnel(String name) {
        switch (name) {
            case "utf8": return (Funnel) Funnels.stringFunnel(StandardCharsets.UTF_8);
            case "utf16le": return (Funnel) Funnels.unencodedCharsFunnel();
            case "i32": return (Funnel) Funnels.integerFunnel();
            case "i64": return (Funnel) Funnels.longFunnel();
            default: throw new IllegalArgumentException(name);
        }
    }

    static Object item(String funnel, String s) {
        switch (funnel) {
            case "i32": return Integer.parseInt(s);
            case "i64": return Long.parseLong(s);
            default: return s;
        }
    }

    public static void main(String[] a) throws Exception {
        String mode = a[0], file = a[1], fun = a[2];
        if (mode.equals("write")) {
            BloomFilter<Object> f = BloomFilter.create(funnel(fun), Long.parseLong(a[3]), Double.parseDouble(a[4]));
            for (int i = 5; i < a.length; i++) f.put(item(fun, a[i]));
            try (OutputStream out = new FileOutputStream(file)) { f.writeTo(out); }
        } else {
            BloomFilter<Object> f;
            try (InputStream in = new FileInputStream(file)) { f = BloomFilter.readFrom(in, funnel(fun)); }
            for (int i = 3; i < a.length; i++) {
                if (f.mightContain(item(fun, a[i]))) System.out.println(a[i]);
            }
        }
    }
}
