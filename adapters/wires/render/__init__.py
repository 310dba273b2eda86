"""The emulator's side of each wire: canonical results rendered into the provider's exact
response bytes, plain or streamed. One module per wire, the mirror of that wire's decoder
(`adapters/wires/<wire>.py`); each wire's `render()` calls its module here. Nothing in this
package imports a codec module: the codec depends on its rendering, never the reverse."""
