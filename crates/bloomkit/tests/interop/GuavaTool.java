// Test helper for bloomkit's live Guava cross-checks (compiled and run by tests/interop_live.rs).
//
//   java GuavaTool write FILE N FPP STRATEGY   elements on stdin (UTF-8 lines) -> writeTo(FILE)
//   java GuavaTool read FILE                   readFrom(FILE), test elements on stdin
//
// STRATEGY is 64 (MURMUR128_MITZ_64, Guava's default) or 32 (MURMUR128_MITZ_32, reached through
// Guava's package-private factory). Both commands print one line:
//   <all elements present: true|false> <approximateElementCount> <expectedFpp>
import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;
import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

public class GuavaTool {
    @SuppressWarnings("unchecked")
    static BloomFilter<CharSequence> create(long n, double fpp, String strategy) throws Exception {
        Funnel<CharSequence> funnel = Funnels.stringFunnel(StandardCharsets.UTF_8);
        if (strategy.equals("64")) {
            return BloomFilter.create(funnel, n, fpp);
        }
        Class<?> strategies = Class.forName("com.google.common.hash.BloomFilterStrategies");
        Field field = strategies.getField("MURMUR128_MITZ_32");
        field.setAccessible(true);
        Object mitz32 = field.get(null);
        Class<?> strategyType = Class.forName("com.google.common.hash.BloomFilter$Strategy");
        Method m = BloomFilter.class.getDeclaredMethod(
                "create", Funnel.class, long.class, double.class, strategyType);
        m.setAccessible(true);
        return (BloomFilter<CharSequence>) m.invoke(null, funnel, n, fpp, mitz32);
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        List<String> items = new ArrayList<>();
        for (String line; (line = in.readLine()) != null; ) {
            items.add(line);
        }
        BloomFilter<CharSequence> f;
        if (args[0].equals("write")) {
            f = create(Long.parseLong(args[2]), Double.parseDouble(args[3]), args[4]);
            for (String s : items) {
                f.put(s);
            }
            try (FileOutputStream out = new FileOutputStream(args[1])) {
                f.writeTo(out);
            }
        } else {
            try (FileInputStream fin = new FileInputStream(args[1])) {
                f = BloomFilter.readFrom(fin, Funnels.stringFunnel(StandardCharsets.UTF_8));
            }
        }
        boolean all = true;
        for (String s : items) {
            all &= f.mightContain(s);
        }
        System.out.println(all + " " + f.approximateElementCount() + " " + f.expectedFpp());
    }
}
