/* Embeds a model compiled by `paddle-compile scale.mlir -o libscale.so`:
   its function forward is exported as scale_forward (libscale.h). */
#include "libscale.h"
#include <stdio.h>

int main(void) {
  float x[2][4] = {{1, -2, 3, -4}, {0.5f, 0.25f, -1, 2}};
  float w[4] = {2, 2, 2, 2}, b[4] = {0, 1, 0, 1};
  paddle_tensor_t tx = {PADDLE_F32, 2, {2, 4}, x}, tw = {PADDLE_F32, 1, {4}, w},
                  tb = {PADDLE_F32, 1, {4}, b}, y;
  paddle_status_t s = scale_forward(&tx, &tw, &tb, &y);
  if (s) {
    fprintf(stderr, "scale_forward: %s\n", paddle_status_message(s));
    return paddle_status_free(s), 1;
  }
  for (int i = 0; i < 8; ++i)
    printf("%g%c", ((float *)y.data)[i], i % 4 == 3 ? '\n' : ' ');
  paddle_tensor_free(&y);
  return 0;
}
