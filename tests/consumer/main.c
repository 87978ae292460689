/* Uses the installed tflite-gles C API from C, with no TFLite library: the
 * header alone must compile as C, the library must link and load, and the
 * delegate must be created (and refused for bad options) as documented in
 * tflite_gles/delegate.h. Exit status 0 only if every check holds; each
 * failing check says which. */
#include <stdio.h>
#include <string.h>

#include <tflite_gles/delegate.h>

static int failures = 0;

static void check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "consumer: FAILED: %s\n", what);
    ++failures;
  }
}

int main(void) {
  TfLiteGlesDelegateOptions options = TfLiteGlesDelegateOptionsDefault();
  check(options.is_precision_loss_allowed == 0, "default options allow precision loss");
  check(options.max_delegated_partitions > 0, "default max_delegated_partitions is not positive");

  struct TfLiteDelegate* delegate = TfLiteGlesDelegateCreate(&options);
  check(delegate != NULL, "TfLiteGlesDelegateCreate(defaults) returned NULL");
  if (delegate != NULL) {
    TfLiteGlesDelegateStats stats;
    memset(&stats, 0x7f, sizeof(stats));
    check(TfLiteGlesDelegateGetStats(delegate, &stats) == 0,
          "TfLiteGlesDelegateGetStats refused our delegate");
    check(stats.nodes_total == 0 && stats.nodes_delegated == 0 && stats.invokes == 0,
          "a delegate applied to no graph reports nodes or invokes");
    TfLiteGlesDelegateDelete(delegate);
  }

  /* Invalid options: NULL with a message on stderr, never a crash. */
  TfLiteGlesDelegateOptions bad = TfLiteGlesDelegateOptionsDefault();
  bad.storage = 99;
  check(TfLiteGlesDelegateCreate(&bad) == NULL, "storage=99 was accepted");

  /* Not a delegate of ours: refused. */
  TfLiteGlesDelegateStats unused;
  check(TfLiteGlesDelegateGetStats(NULL, &unused) == -1, "GetStats(NULL) was accepted");

  /* The external-delegate entry points (what load_delegate and
   * --external_delegate_path call), with key/value options. */
  const char* keys[] = {"precision_loss_allowed", "storage"};
  const char* values[] = {"true", "ssbo"};
  struct TfLiteDelegate* external = tflite_plugin_create_delegate(
      (char**)keys, (char**)values, 2, NULL);
  check(external != NULL, "tflite_plugin_create_delegate refused valid options");
  if (external != NULL) tflite_plugin_destroy_delegate(external);
  const char* bad_keys[] = {"no_such_option"};
  const char* bad_values[] = {"1"};
  check(tflite_plugin_create_delegate((char**)bad_keys, (char**)bad_values, 1, NULL) == NULL,
        "tflite_plugin_create_delegate accepted an unknown option");

  if (failures == 0) printf("consumer: ok\n");
  return failures == 0 ? 0 : 1;
}
