// Prints the producer's or the consumer's configs as kafka-clients defines them
// (ProducerConfig.configDef(), ConsumerConfig.configDef()), one a line: name, type, default and
// validator, tab-separated, sorted by name. clients/names/regenerate writes the checked-in tables
// with it; tests/client_names.rs runs it against the jar and compares.
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;

public class DumpNames {
    /** A default as a scenario would write it: a class by its name, a list joined by commas. */
    static String text(Object v) {
        if (v == null) return "null";
        if (v instanceof Class) return ((Class<?>) v).getName();
        if (v instanceof List) {
            return ((List<?>) v).stream().map(DumpNames::text).collect(Collectors.joining(","));
        }
        return v.toString();
    }

    public static void main(String[] args) {
        ConfigDef def;
        if (args.length == 1 && args[0].equals("producer")) {
            def = ProducerConfig.configDef();
        } else if (args.length == 1 && args[0].equals("consumer")) {
            def = ConsumerConfig.configDef();
        } else {
            System.err.println("usage: DumpNames producer|consumer");
            System.exit(2);
            return;
        }
        Map<String, ConfigDef.ConfigKey> keys = new TreeMap<>(def.configKeys());
        for (ConfigDef.ConfigKey k : keys.values()) {
            String dflt;
            if (!k.hasDefault()) {
                dflt = "<required>";
            } else if (k.type == ConfigDef.Type.PASSWORD && k.defaultValue != null) {
                dflt = "[hidden]";
            } else {
                dflt = text(k.defaultValue);
            }
            String valid = k.validator == null ? "" : k.validator.toString();
            System.out.println(k.name + "\t" + k.type + "\t" + dflt + "\t" + valid);
        }
    }
}
